// Package netguard keeps the server's own requests to addresses a client
// names (webhooks) off the networks the server alone can reach: loopback,
// private and link-local networks, cloud metadata addresses, and the
// reserved and special-purpose ranges, however the address is written
// (an IPv4 address in IPv6 form, mapped or translated, a NAT64 or 6to4
// address embedding one).
//
// A URL is checked when it is given ([Guard.CheckURL], resolving a DNS
// name), and the address of each connection again when it is dialled
// ([Guard.Transport]), so that a name that resolves elsewhere later (DNS
// rebinding) is caught too.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// blocked lists the ranges no request goes to unless allowed.
var blocked = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8",         // this network
		"10.0.0.0/8",        // private
		"100.64.0.0/10",     // shared address space (carrier NAT; some clouds' metadata)
		"127.0.0.0/8",       // loopback
		"169.254.0.0/16",    // link-local, with the cloud metadata address
		"172.16.0.0/12",     // private
		"192.0.0.0/24",      // IETF protocol assignments
		"192.0.2.0/24",      // documentation
		"192.88.99.0/24",    // 6to4 relay anycast
		"192.168.0.0/16",    // private
		"192.31.196.0/24",   // AS112 (RFC 7535)
		"192.175.48.0/24",   // AS112 direct delegation (RFC 7534)
		"198.18.0.0/15",     // benchmarking
		"198.51.100.0/24",   // documentation
		"203.0.113.0/24",    // documentation
		"224.0.0.0/4",       // multicast
		"240.0.0.0/4",       // reserved, and broadcast
		"::/128",            // unspecified
		"::1/128",           // loopback
		"::/96",             // IPv4-compatible (deprecated)
		"100::/64",          // discard
		"100:0:0:1::/64",    // dummy prefix (RFC 9780)
		"2001::/32",         // Teredo
		"2001:2::/48",       // benchmarking
		"2001:4:112::/48",   // AS112
		"2001:10::/28",      // ORCHID (deprecated)
		"2001:20::/28",      // ORCHIDv2
		"2001:30::/28",      // DRIP entity tags
		"2001:db8::/32",     // documentation
		"2620:4f:8000::/48", // AS112 direct delegation
		"3fff::/20",         // documentation (RFC 9637)
		"5f00::/16",         // SRv6 SIDs (RFC 9602)
		"fc00::/7",          // unique local, with fd00:ec2::254 (a cloud metadata address)
		"fe80::/10",         // link-local
		"fec0::/10",         // site-local (deprecated)
		"ff00::/8",          // multicast
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// Embedding ranges: an IPv6 address that carries an IPv4 one is checked
// as that IPv4 address too.
var (
	translated = netip.MustParsePrefix("::ffff:0:0:0/96") // IPv4-translated (RFC 6145)
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	nat64Ext   = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour  = netip.MustParsePrefix("2002::/16")
)

// ErrBlocked is the error of an address the guard refuses.
var ErrBlocked = errors.New("not a public address")

// Guard checks the addresses of requests. The zero value refuses every
// range above; Allowed opens some.
type Guard struct {
	// Allowed lists networks requests may reach although they are not
	// public (a test's loopback, a private network the server trusts).
	Allowed []netip.Prefix
	// Lookup resolves a host name; nil means net.DefaultResolver.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
}

// CheckAddr returns an error wrapping ErrBlocked unless addr is public or
// allowed.
func (g *Guard) CheckAddr(addr netip.Addr) error {
	addr = addr.Unmap().WithZone("")
	for _, p := range g.Allowed {
		if p.Contains(addr) {
			return nil
		}
	}
	if !addr.IsValid() {
		return fmt.Errorf("an invalid address: %w", ErrBlocked)
	}
	for _, p := range blocked {
		if p.Contains(addr) {
			return fmt.Errorf("%s is in %s: %w", addr, p, ErrBlocked)
		}
	}
	if v4, ok := embedded(addr); ok {
		if err := g.CheckAddr(v4); err != nil {
			return fmt.Errorf("%s carries %s, which is not public: %w", addr, v4, ErrBlocked)
		}
	}
	return nil
}

// embedded is the IPv4 address an IPv4-translated, NAT64 or 6to4 address
// carries.
func embedded(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	switch {
	case translated.Contains(a), nat64.Contains(a), nat64Ext.Contains(a):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	}
	return netip.Addr{}, false
}

// MaxResponseHeader bounds the headers of an answer through
// [Guard.Transport]: an address a client names answers what it likes.
const MaxResponseHeader = 16 << 10

// MaxURL is the longest URL CheckURL takes.
const MaxURL = 2048

// CheckURL parses raw, an http or https URL with a host and no
// credentials, and checks the addresses its host names (resolving a DNS
// name: every address it resolves to must pass). It returns the parsed
// URL, or an error that says what is wrong with it.
func (g *Guard) CheckURL(ctx context.Context, raw string) (*url.URL, error) {
	if len(raw) > MaxURL {
		return nil, fmt.Errorf("longer than %d bytes", MaxURL)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, errors.New("not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("must be an http or https URL")
	case u.Host == "" || u.Hostname() == "":
		return nil, errors.New("must name a host")
	case u.User != nil:
		return nil, errors.New("must not carry credentials (user:password@); give them as the configuration's authentication")
	}
	host := u.Hostname()
	if a, err := netip.ParseAddr(host); err == nil {
		if err := g.CheckAddr(a); err != nil {
			return nil, err
		}
		return u, nil
	}
	if h := strings.ToLower(strings.TrimSuffix(host, ".")); h == "localhost" || strings.HasSuffix(h, ".localhost") {
		// RFC 6761: always loopback, whatever a resolver says.
		if err := g.CheckAddr(netip.MustParseAddr("127.0.0.1")); err != nil {
			return nil, fmt.Errorf("%s is loopback: %w", host, ErrBlocked)
		}
	}
	addrs, err := g.lookup(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("its host %q does not resolve: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("its host %q resolves to no address", host)
	}
	for _, a := range addrs {
		if err := g.CheckAddr(a); err != nil {
			return nil, fmt.Errorf("its host %q resolves to %w", host, err)
		}
	}
	return u, nil
}

func (g *Guard) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if g.Lookup != nil {
		return g.Lookup(ctx, host)
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// Transport returns a transport whose every connection is checked, once
// resolved, before it is made: one to an address the guard refuses fails
// with an error wrapping ErrBlocked. It uses no proxy (a proxy would
// reach the addresses for it), timeout bounds each dial, TLS handshake
// and wait for an answer's headers, and MaxResponseHeader their size.
func (g *Guard) Transport(timeout time.Duration) *http.Transport {
	d := &net.Dialer{Timeout: timeout, Control: func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("netguard: dialling %q: %w", address, ErrBlocked)
		}
		return g.CheckAddr(ap.Addr())
	}}
	resolve := d.DialContext
	if g.Lookup != nil {
		resolve = func(ctx context.Context, network, address string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(address)
			if err != nil {
				return nil, err
			}
			if _, err := netip.ParseAddr(host); err == nil {
				return d.DialContext(ctx, network, address)
			}
			addrs, err := g.Lookup(ctx, host)
			if err != nil {
				return nil, err
			}
			var last error = fmt.Errorf("%s resolves to no address", host)
			for _, a := range addrs {
				c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
				if err == nil {
					return c, nil
				}
				last = err
			}
			return nil, last
		}
	}
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            resolve,
		MaxResponseHeaderBytes: MaxResponseHeader,
		TLSHandshakeTimeout:    timeout,
		ResponseHeaderTimeout:  timeout,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        30 * time.Second,
		ForceAttemptHTTP2:      true,
	}
}
