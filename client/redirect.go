package client

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// maxRedirects is how many redirects a read follows before it gives up.
const maxRedirects = 10

// RedirectError is a redirect the client did not follow. Requests carry
// credentials (OXP-API-Key, Authorization) and calls carry their input and
// secrets, so the client follows a redirect only for a read (GET or HEAD)
// and only within the origin (scheme, host and port) it was sent to. A
// call (POST) is never redirected: the server that named the Location
// should be called at that URL instead.
type RedirectError struct {
	// Method is the method of the request that was redirected.
	Method string
	// From is the URL the request was sent to, and Location the URL the
	// server redirected it to.
	From, Location string
	// Status is the redirect's HTTP status, when known.
	Status int
}

// Error names the Location and says why it was not followed.
func (e *RedirectError) Error() string {
	status := ""
	if e.Status != 0 {
		status = fmt.Sprintf(" (%d)", e.Status)
	}
	if e.Method != http.MethodGet && e.Method != http.MethodHead {
		return fmt.Sprintf("the server redirected the %s to %s%s; a %s is never redirected, because it carries credentials and a body: use the URL the server names", e.Method, e.Location, status, e.Method)
	}
	return fmt.Sprintf("the server redirected the %s to %s%s, another origin than %s; credentials never leave their origin: use the URL the server names", e.Method, e.Location, status, origin(e.From))
}

// CheckRedirect is the client's redirect rule, in the shape of
// [http.Client].CheckRedirect: a GET or HEAD follows up to ten redirects
// within its origin; any other redirect returns a [*RedirectError] naming
// the Location. [New] applies it to the HTTP client it is given; set it on
// an http.Client of your own that sends credentials to tool servers.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	first := via[0]
	if first.Method != http.MethodGet && first.Method != http.MethodHead || !sameOrigin(first.URL, req.URL) {
		e := &RedirectError{Method: first.Method, From: first.URL.String(), Location: req.URL.String()}
		if req.Response != nil {
			e.Status = req.Response.StatusCode
		}
		return e
	}
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	return nil
}

// withRedirectRule returns d, made to follow [CheckRedirect]: a copy of an
// *http.Client with the rule in front of its own CheckRedirect, a new
// client for nil. Another Doer is used as it is; a redirect it hands back
// unfollowed is refused by [Client.do].
func withRedirectRule(d Doer) Doer {
	if d == nil {
		return &http.Client{CheckRedirect: CheckRedirect}
	}
	hc, ok := d.(*http.Client)
	if !ok {
		return d
	}
	cp := *hc
	own := hc.CheckRedirect
	cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := CheckRedirect(req, via); err != nil || own == nil {
			return err
		}
		return own(req, via)
	}
	return &cp
}

// OriginError is a URL that a server handed back, other than by a
// redirect (an Agent Card's interface, an OAuth metadata document, a
// Location header), on another origin than the URL the client was given.
// Credentials and calls go only to the origin they were given for, so the
// URL is not used: a card served at one origin cannot send a caller's
// key to another. To call the server at that URL, give it yourself.
type OriginError struct {
	// What is what named the URL: "the Agent Card's JSON-RPC interface".
	What string
	// Given is the URL the client was given; Named the URL the server
	// named, resolved against it.
	Given, Named string
}

// Error names both URLs and says how to use the one the server named.
func (e *OriginError) Error() string {
	return fmt.Sprintf("%s is %s, on another origin than %s; credentials and calls go only to the origin you gave, so it is not used: to call it, give that URL itself", e.What, e.Named, origin(e.Given))
}

// CheckOrigin returns the URL named (absolute, or relative to given) when
// it is on the origin of given (scheme, host and port, a scheme's default
// port standing for an absent one), and otherwise an [*OriginError]
// saying that what named it pointed elsewhere. Every URL a server hands
// back that the client would send credentials or a call to passes through
// it; so does the command's reading of an Agent Card.
func CheckOrigin(given, named, what string) (string, error) {
	g, err := url.Parse(given)
	if err != nil {
		return "", fmt.Errorf("%s: %w", given, err)
	}
	n, err := g.Parse(named)
	if err != nil || !sameOrigin(g, n) {
		return "", &OriginError{What: what, Given: given, Named: named}
	}
	return n.String(), nil
}

// sameOrigin reports whether a and b have the same scheme, host and port,
// the default port of the scheme standing for an absent one.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) &&
		strings.EqualFold(a.Hostname(), b.Hostname()) &&
		portOf(a) == portOf(b)
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}

// origin is the scheme, host and port of a URL, for messages.
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Scheme + "://" + u.Host
}

// isRedirect reports whether status is one of the redirects an HTTP client
// follows.
func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}
