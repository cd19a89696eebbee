package validate

import (
	"encoding/base64"
	"net/mail"
	"net/netip"
	"net/url"
	"regexp"
	"time"

	"github.com/otcgo/otc/internal/jsonparse"
)

// This file holds the checks of the JSON Schema "format" keyword. Each
// check accepts exactly what the Go type the reflector gives that format
// decodes, so that an input the validator accepts never fails to decode:
// "date-time" is RFC 3339 as time.Time reads it, not the looser forms
// some validators let through. A format not listed here is an annotation,
// as JSON Schema allows.

// formatRule checks one format and says, for a model, what was expected.
type formatRule struct {
	valid   func([]byte) bool
	message string
}

var formats = map[string]*formatRule{
	"date-time": {validDateTime, "Must be a date-time in RFC 3339 form, such as 2026-11-22T10:00:00Z"},
	"date":      {validDate, "Must be a date in the form 2026-11-22"},
	"time":      {validTime, "Must be a time of day in RFC 3339 form, such as 10:00:00Z"},
	"email":     {validEmail, "Must be an email address, such as ada@example.com"},
	"hostname":  {validHostname, "Must be a host name, such as example.com"},
	"ipv4":      {validIPv4, "Must be an IPv4 address, such as 192.0.2.1"},
	"ipv6":      {validIPv6, "Must be an IPv6 address, such as 2001:db8::1"},
	"uri":       {validURI, "Must be an absolute URI, such as https://example.com/a"},
	"uri-reference": {func(b []byte) bool {
		_, err := url.Parse(string(b))
		return err == nil
	}, "Must be a URI reference"},
	"uuid":                  {validUUID, "Must be a UUID, such as 123e4567-e89b-12d3-a456-426614174000"},
	"regex":                 {validRegex, "Must be a regular expression"},
	"json-pointer":          {validJSONPointer, "Must be a JSON pointer, such as /a/b"},
	"relative-json-pointer": {validRelativeJSONPointer, "Must be a relative JSON pointer, such as 1/a"},
}

// base64Rule checks contentEncoding "base64", the form encoding/json
// reads into a []byte: the standard alphabet, padded.
var base64Rule = &formatRule{func(b []byte) bool {
	_, err := base64.StdEncoding.DecodeString(string(b))
	return err == nil
}, "Must be base64 text (the standard alphabet, padded with =)"}

// DurationPattern is the schema pattern of a time.Duration: Go's duration
// syntax, as time.ParseDuration reads it ("90s", "1h30m", "250ms").
const DurationPattern = `^[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`

// durationRule checks what durationPattern cannot: that the duration is
// within time.Duration's range, about 292 years.
var durationRule = &formatRule{func(b []byte) bool {
	_, err := time.ParseDuration(string(b))
	return err == nil
}, "Must be a duration of at most 2562047h (about 292 years)"}

// durationTypeText is the message for a value of another type where a
// duration is expected: models send a number of seconds.
const durationTypeText = `Must be a duration string such as "90s", "5m" or "1h30m" (not a number of seconds)`

// patternMessages gives the patterns the reflector writes a message a
// model can act on, instead of the pattern itself.
var patternMessages = map[string]string{
	DurationPattern: `Must be a duration such as "90s", "5m" or "1h30m" (units ns, us, ms, s, m, h)`,
}

func validDateTime(b []byte) bool {
	var t time.Time
	return t.UnmarshalText(b) == nil
}

func validDate(b []byte) bool {
	if len(b) != len("2006-01-02") {
		return false
	}
	_, err := time.Parse(time.DateOnly, string(b))
	return err == nil
}

// validTime accepts RFC 3339's full-time: hh:mm:ss, an optional fraction,
// and a zone, Z or ±hh:mm.
func validTime(b []byte) bool {
	if len(b) < len("15:04:05Z") {
		return false
	}
	var t time.Time
	return t.UnmarshalText(append([]byte("2000-01-01T"), b...)) == nil
}

func validEmail(b []byte) bool {
	a, err := mail.ParseAddress(string(b))
	return err == nil && a.Name == "" && a.Address == string(b)
}

// validHostname checks RFC 1123: dot-separated labels of letters, digits
// and hyphens, 1 to 63 bytes each, not starting or ending with a hyphen,
// 253 bytes in all.
func validHostname(b []byte) bool {
	if len(b) == 0 || len(b) > 253 {
		return false
	}
	label := 0
	for i, c := range b {
		switch {
		case c == '.':
			if label == 0 || b[i-1] == '-' {
				return false
			}
			label = 0
		case c == '-':
			if label == 0 {
				return false
			}
			label++
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
			label++
		default:
			return false
		}
		if label > 63 {
			return false
		}
	}
	return label > 0 && b[len(b)-1] != '-'
}

func validIPv4(b []byte) bool {
	a, err := netip.ParseAddr(string(b))
	return err == nil && a.Is4()
}

func validIPv6(b []byte) bool {
	a, err := netip.ParseAddr(string(b))
	return err == nil && a.Is6() && a.Zone() == ""
}

func validURI(b []byte) bool {
	u, err := url.Parse(string(b))
	return err == nil && u.IsAbs()
}

func validUUID(b []byte) bool {
	if len(b) != 36 {
		return false
	}
	for i, c := range b {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !jsonparse.IsHex(c) {
				return false
			}
		}
	}
	return true
}

func validRegex(b []byte) bool {
	_, err := regexp.Compile(string(b))
	return err == nil
}

func validJSONPointer(b []byte) bool {
	if len(b) == 0 {
		return true
	}
	if b[0] != '/' {
		return false
	}
	for i := 0; i < len(b); i++ {
		if b[i] == '~' && (i+1 >= len(b) || b[i+1] != '0' && b[i+1] != '1') {
			return false
		}
	}
	return true
}

func validRelativeJSONPointer(b []byte) bool {
	i := 0
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	if i == 0 || i > 1 && b[0] == '0' {
		return false
	}
	rest := b[i:]
	return len(rest) == 1 && rest[0] == '#' || validJSONPointer(rest)
}
