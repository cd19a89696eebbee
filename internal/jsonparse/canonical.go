package jsonparse

import (
	"encoding/binary"
	"math"
	"slices"
	"strconv"
)

// AppendCanonical appends a canonical form of node i, for hashing two
// texts that mean the same value to the same bytes: a type byte, then
// for a string its length and unescaped bytes, for a number its
// canonical text, for an array its elements, and for an object its
// members sorted by name.
func AppendCanonical(dst []byte, d *Document, i int32) []byte {
	n := &d.Nodes[i]
	switch n.Kind {
	case KindNull:
		return append(dst, 'n')
	case KindFalse:
		return append(dst, 'f')
	case KindTrue:
		return append(dst, 't')
	case KindNumber:
		dst = append(dst, 'd')
		dst = appendCanonicalNumber(dst, d.Raw(i), n.Flags)
		return append(dst, ';')
	case KindString:
		var buf [64]byte
		return appendCanonicalString(dst, d.StringBytes(i, buf[:0]))
	case KindArray:
		dst = append(dst, '[')
		for _, e := range d.Elements(i) {
			dst = AppendCanonical(dst, d, e)
		}
		return append(dst, ']')
	}
	type member struct {
		name []byte
		v    int32
	}
	var small [8]member
	ms := small[:0]
	sorted := true
	for k, v := range d.Members(i) {
		name := d.StringBytes(k, nil)
		if kn := &d.Nodes[k]; kn.Flags&FlagEscaped == 0 {
			name = d.Data[kn.Start+1 : kn.End-1]
		}
		if len(ms) > 0 && string(ms[len(ms)-1].name) > string(name) {
			sorted = false
		}
		ms = append(ms, member{name, v})
	}
	if !sorted {
		slices.SortStableFunc(ms, func(a, b member) int { return compareBytes(a.name, b.name) })
	}
	dst = append(dst, '{')
	for _, m := range ms {
		dst = appendCanonicalString(dst, m.name)
		dst = AppendCanonical(dst, d, m.v)
	}
	return append(dst, '}')
}

func compareBytes(a, b []byte) int {
	switch {
	case string(a) < string(b):
		return -1
	case string(a) > string(b):
		return 1
	}
	return 0
}

func appendCanonicalString(dst, s []byte) []byte {
	dst = append(dst, 's')
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// appendCanonicalNumber writes a number so that 1, 1.0 and 1e0 read the
// same, as the validator compares them: an integer literal as it is, and
// any other number by its float64 value, in integer form when it is a
// whole number below 2^53.
func appendCanonicalNumber(dst, raw []byte, flags uint8) []byte {
	if flags&(FlagFraction|FlagExponent) == 0 {
		if string(raw) == "-0" {
			return append(dst, '0')
		}
		return append(dst, raw...)
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	switch {
	case err != nil:
		return append(dst, raw...)
	case f == math.Trunc(f) && math.Abs(f) < 1<<53:
		return strconv.AppendInt(dst, int64(f), 10)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64)
}
