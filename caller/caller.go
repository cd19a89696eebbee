// Package caller says who made a request, the one way every part of this
// module asks it: the rate limits, the failed-authentication bound, the
// task stores' per-caller caps and owners, and the questions a call asks.
//
// A caller that authenticated is its identity ([otc.CallerIdentity]): the
// token's issuer and subject, or the API key's name. A caller without one
// is its client: the network it calls from. [Key] returns the one key for
// both.
//
// # The client of a request
//
// The client is the TCP peer of the request, or, when that peer is one of
// the trusted proxies (a load balancer), the address the proxies say they
// received the request from in X-Forwarded-For: the rightmost address that
// is not itself a trusted proxy. X-Forwarded-For is never read from a peer
// that is not trusted, since any client can write it. Proxies write an
// address alone, with a port ("198.51.100.7:4711"), or bracketed
// ("[2001:db8::1]:4711"), and all are read; an entry that is not an
// address ("unknown", an obfuscated identifier) is its client by its own
// text, never the proxy that passed it on.
//
// An IPv4 client is its address. An IPv6 client is its /64 network by
// default ([Options].IPv6Bits): a host is given a /64, and every address
// in it is the same host's, so that fresh addresses buy no fresh
// allowances.
//
// Trust proxies with [Handler] around the handlers of the wire formats:
//
//	h := caller.Handler(mux, &caller.Options{
//		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
//	})
//
// Without it, the client is the TCP peer, and behind a balancer every
// anonymous caller is the balancer.
package caller

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"unicode/utf8"

	"github.com/otcgo/otc"
	idclaims "github.com/otcgo/otc/internal/claims"
)

// DefaultIPv6Bits is the prefix length by which IPv6 clients are grouped:
// a /64, what one host, or one home, is given.
const DefaultIPv6Bits = 64

// Options configures how [Handler] reads the client of a request. The
// zero value, and nil, read the TCP peer, IPv6 grouped by
// DefaultIPv6Bits.
type Options struct {
	// TrustedProxies are the peers (load balancers, reverse proxies)
	// whose X-Forwarded-For header names the client. Nil means none.
	TrustedProxies []netip.Prefix
	// IPv6Bits is the length of the prefix that an IPv6 client is known
	// by: every address of a /64 is one client by default; 128 makes
	// each address a client of its own. Zero means DefaultIPv6Bits.
	IPv6Bits int
}

type optionsKey struct{}

// defaults are the options of a request no Handler saw.
var defaults = &Options{IPv6Bits: DefaultIPv6Bits}

// Handler returns next, reading the client of each request by opts for
// [Key] and [Client]. It panics, naming the field, when opts cannot be
// used: it is meant for a server's setup.
func Handler(next http.Handler, opts *Options) http.Handler {
	o := Options{IPv6Bits: DefaultIPv6Bits}
	if opts != nil {
		o.TrustedProxies = append([]netip.Prefix(nil), opts.TrustedProxies...)
		if opts.IPv6Bits != 0 {
			o.IPv6Bits = opts.IPv6Bits
		}
	}
	if o.IPv6Bits < 1 || o.IPv6Bits > 128 {
		panic(fmt.Sprintf("caller: Options.IPv6Bits is %d; give the prefix length (1 to 128) an IPv6 client is known by, such as 64", o.IPv6Bits))
	}
	for i, p := range o.TrustedProxies {
		if !p.IsValid() {
			panic(fmt.Sprintf("caller: Options.TrustedProxies[%d] is not a valid prefix", i))
		}
		o.TrustedProxies[i] = p.Masked()
	}
	if len(o.TrustedProxies) == 0 && o.IPv6Bits == DefaultIPv6Bits {
		return next // what a request without the options reads
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), optionsKey{}, &o)))
	})
}

// ErrUnnamed is returned by [Key] for an authenticated caller whose
// credential names no one: a token with neither "sub" nor "client_id", or
// an identity without a name. Nothing can be kept for such a caller alone,
// since two of them could not be told apart.
var ErrUnnamed = errors.New("caller: the caller's credential names no one (a token with neither sub nor client_id), so nothing can be kept for it alone")

// Key returns the key of the caller of a request or a call, to which what
// a call leaves behind belongs (its tasks, its questions) and by which its
// limits are counted. ctx carries the caller's identity; r is the HTTP
// request the call came in, nil for one that did not come over HTTP.
//
// An authenticated caller's key holds the identity's method, the token's
// issuer, and the claim that names the caller with its value: "sub", else
// "client_id" (a subject never equals a client id), else, for an identity
// without claims (an API key), its Name; each part is length-prefixed, so
// that no identity spells another's key. Such a caller whose credential
// names no one gets [ErrUnnamed], with the key it would have without its
// credential: what keeps things for a caller refuses it, what only counts
// callers (a rate limit) may count it there.
//
// An anonymous caller's key is "a:" and its [Client]; one that did not
// come over HTTP (MCP over stdio, a direct call) is "a", the one client of
// the process.
func Key(ctx context.Context, r *http.Request) (string, error) {
	if id := otc.CallerIdentity(ctx); id != nil {
		k, err := identityKey(id)
		if err == nil {
			return k, nil
		}
		return anonymous(r), err
	}
	return anonymous(r), nil
}

// anonymous is the key of a caller without an identity.
func anonymous(r *http.Request) string {
	if r == nil {
		return "a"
	}
	var buf [64]byte
	return string(appendClient(append(buf[:0], "a:"...), r))
}

// identityKey is the key of an authenticated caller.
func identityKey(id *otc.Identity) (string, error) {
	var kind, name, iss string
	if id.Claims != nil {
		kind, name = idclaims.Subject(id.Claims)
		iss = idclaims.Issuer(id.Claims)
	}
	if kind == "" && id.Name != "" {
		kind, name = "name", id.Name
	}
	if kind == "" {
		return "", ErrUnnamed
	}
	b := []byte{'i'}
	for _, s := range [...]string{id.Method, iss, kind, name} {
		b = fmt.Appendf(b, "%d:%s", len(s), s)
	}
	return string(b), nil
}

// Client returns the client of r, as the package doc says: an IPv4
// address ("198.51.100.7"), an IPv6 network ("2001:db8:1:2::/64"), or,
// for an X-Forwarded-For entry that is no address, that entry's text
// quoted (`"unknown"`, at most 64 bytes of it).
func Client(r *http.Request) string {
	var buf [64]byte
	return string(appendClient(buf[:0], r))
}

// appendClient appends the text of the client of r, as Client says.
func appendClient(dst []byte, r *http.Request) []byte {
	o, _ := r.Context().Value(optionsKey{}).(*Options)
	if o == nil {
		o = defaults
	}
	addr, text := clientOf(r.RemoteAddr, r.Header.Values("X-Forwarded-For"), o.TrustedProxies)
	if !addr.IsValid() {
		return append(dst, text...)
	}
	return appendGroup(dst, addr, o.IPv6Bits)
}

// appendGroup appends the text of the client at addr: the address for
// IPv4, its network of bits for IPv6.
func appendGroup(dst []byte, addr netip.Addr, bits int) []byte {
	if addr.Is4() || bits >= 128 {
		return addr.AppendTo(dst)
	}
	p, _ := addr.Prefix(bits) // bits is in range, addr IPv6
	return p.AppendTo(dst)
}

// clientOf returns the client of a request from remoteAddr, its
// X-Forwarded-For header lines and the trusted proxies: its address, or,
// when it is not one, the text that names it.
func clientOf(remoteAddr string, forwarded []string, proxies []netip.Prefix) (netip.Addr, string) {
	peer, ok := parseHop(remoteAddr)
	if !ok {
		return netip.Addr{}, quoted(remoteAddr)
	}
	if !trusted(peer, proxies) {
		return peer, ""
	}
	for i := len(forwarded) - 1; i >= 0; i-- {
		line := forwarded[i]
		for line != "" {
			hop := line
			if j := strings.LastIndexByte(line, ','); j >= 0 {
				hop, line = line[j+1:], line[:j]
			} else {
				line = ""
			}
			hop = strings.TrimSpace(hop)
			if hop == "" {
				continue
			}
			a, ok := parseHop(hop)
			if !ok {
				return netip.Addr{}, quoted(hop) // its own text: never the proxy's
			}
			if !trusted(a, proxies) {
				return a, ""
			}
			peer = a
		}
	}
	return peer, "" // every hop a trusted proxy: the leftmost is the client
}

// parseHop reads an address as proxies write one: alone, with a port, or
// bracketed (IPv6, with or without a port), optionally quoted, with an
// IPv6 zone dropped and IPv4-mapped IPv6 read as IPv4.
func parseHop(s string) (netip.Addr, bool) {
	host := strings.Trim(s, `"`)
	switch {
	case strings.HasPrefix(host, "["): // [v6] or [v6]:port
		end := strings.IndexByte(host, ']')
		if end < 0 || end+1 < len(host) && (host[end+1] != ':' || !isPort(host[end+2:])) {
			return netip.Addr{}, false
		}
		host = host[1:end]
	case strings.Count(host, ":") == 1: // v4:port
		h, port, _ := strings.Cut(host, ":")
		if !isPort(port) {
			return netip.Addr{}, false
		}
		host = h
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.WithZone("").Unmap(), true
}

// isPort reports whether s is a port number.
func isPort(s string) bool {
	if s == "" || len(s) > 5 {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// maxText bounds the text of a client that is not an address.
const maxText = 64

// quoted is the key of a client named by text that is not an address: at
// most maxText bytes of it, quoted, so that it never reads as an address.
func quoted(s string) string {
	if len(s) > maxText {
		s = s[:maxText]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	return fmt.Sprintf("%q", s)
}

// trusted reports whether a is one of the proxies.
func trusted(a netip.Addr, proxies []netip.Prefix) bool {
	for _, p := range proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
