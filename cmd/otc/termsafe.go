package main

import (
	"bytes"
	"io"
	"unicode/utf8"
)

// termSafe writes to a terminal what a server's text may hold, made
// harmless: every control character but line breaks and tabs, every
// escape sequence but the few otc writes itself (its bold, red and reset,
// and the spinner's "\r\x1b[K"), C1 controls, the line and paragraph
// separators and bytes that are not UTF-8 become '?'. A tool's
// description or result cannot then write the clipboard (OSC 52), plant
// a link (OSC 8), clear the screen or retitle the window. Output to a
// pipe or a file, and --json, are written as they are.
type termSafe struct{ w io.Writer }

// ownEscapes are the sequences otc writes itself.
var ownEscapes = [][]byte{
	[]byte(styleBold), []byte(styleRed), []byte(styleReset),
	[]byte("\r\x1b[K"), []byte("\x1b[K"),
}

func (t termSafe) Write(p []byte) (int, error) {
	if safeForTerminal(p) {
		return t.w.Write(p)
	}
	_, err := t.w.Write(termText(p))
	return len(p), err
}

// safeForTerminal reports whether p needs no change: printable UTF-8,
// line breaks and tabs, and no escape.
func safeForTerminal(p []byte) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c < ' ' && c != '\n' && c != '\t' || c >= 0x7f {
			return false
		}
	}
	return true
}

// termText is p with what a terminal would act on replaced.
func termText(p []byte) []byte {
	out := make([]byte, 0, len(p))
outer:
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\n' || c == '\t' || c >= ' ' && c < 0x7f:
			out = append(out, c)
			i++
			continue
		case c == '\x1b' || c == '\r':
			for _, esc := range ownEscapes {
				if bytes.HasPrefix(p[i:], esc) {
					out = append(out, esc...)
					i += len(esc)
					continue outer
				}
			}
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(p[i:])
			if r != utf8.RuneError && !(r >= 0x80 && r < 0xa0) && r != '\u2028' && r != '\u2029' {
				out = append(out, p[i:i+n]...)
				i += n
				continue
			}
			out = append(out, '?')
			i += n
			continue
		}
		out = append(out, '?')
		i++
	}
	return out
}
