package oauth

import (
	"strings"

	"github.com/otcgo/otc"
)

// This file writes the WWW-Authenticate challenges of a resource server
// (RFC 6750 §3, RFC 9728 §5.1, and the MCP authorization spec's scope
// challenges).

// maxDescription caps an error_description: a sentence, not the message
// of every check.
const maxDescription = 300

// Challenge returns the challenge of an answer refusing a request with
// e, whichever authenticator refused it:
//
//   - a 401 (CodeUnauthenticated) for a request without a bearer token
//     (Reason empty or [otc.ReasonMissingToken]):
//     `Bearer resource_metadata="https://tools.example.com/.well-known/oauth-protected-resource/mcp"`,
//     which tells a client where to read this server's metadata, and so
//     its authorization servers (RFC 9728 §5.1);
//   - a 401 for a token that was sent and refused:
//     `Bearer resource_metadata="…", error="invalid_token",
//     error_description="…"`, the description being e's message, which
//     never quotes the token;
//   - a 403 with [otc.ReasonInsufficientScope]:
//     `Bearer error="insufficient_scope", scope="…",
//     resource_metadata="…", error_description="…"`, scope naming
//     e.RequiredScopes, for a client to ask for them (step-up
//     authorization);
//   - "" for any other refusal.
//
// Values are quoted strings (RFC 9110 §5.6.4): `"` and `\` are escaped.
// error_description keeps to the characters RFC 6750 §3 allows, others
// replaced.
func (a *Authenticator) Challenge(e *otc.Error) string {
	if e == nil {
		return ""
	}
	switch {
	case e.Code == otc.CodeUnauthenticated && a.dpop != nil && (e.Reason == ReasonInvalidProof || e.Reason == ReasonUseNonce):
		return a.dpopChallenge + ", error=" + quote(e.Reason) + ", error_description=" + quote(description(e.Message))
	case e.Code == otc.CodeUnauthenticated:
		c := a.challenge
		if e.Reason != "" && e.Reason != otc.ReasonMissingToken {
			c += `, error="invalid_token", error_description=` + quote(description(e.Message))
		}
		if a.dpop != nil && !a.dpop.Required {
			c += ", " + a.dpopChallenge // a client may send a bound token instead
		}
		return c
	case e.Code == otc.CodeForbidden && e.Reason == otc.ReasonInsufficientScope:
		var b strings.Builder
		b.WriteString(`Bearer error="insufficient_scope"`)
		if len(e.RequiredScopes) > 0 {
			b.WriteString(`, scope=`)
			b.WriteString(quote(strings.Join(e.RequiredScopes, " ")))
		}
		b.WriteString(`, resource_metadata=`)
		b.WriteString(quote(a.prmURL))
		if e.Message != "" {
			b.WriteString(`, error_description=`)
			b.WriteString(quote(description(e.Message)))
		}
		return b.String()
	}
	return ""
}

// quote writes s as a quoted-string (RFC 9110 §5.6.4), escaping `"` and
// `\`.
func quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String()
}

// description makes a message an error_description: the characters RFC
// 6750 §3 allows there (printable ASCII but `"` and `\`), `"` becoming
// `'`, `\` becoming `/` and any other character `?`, at most
// maxDescription bytes.
func description(msg string) string {
	var b strings.Builder
	for _, r := range msg {
		if b.Len() >= maxDescription {
			break
		}
		switch {
		case r == '"':
			b.WriteByte('\'')
		case r == '\\':
			b.WriteByte('/')
		case r >= 0x20 && r <= 0x7e:
			b.WriteRune(r)
		default:
			b.WriteByte('?')
		}
	}
	return b.String()
}
