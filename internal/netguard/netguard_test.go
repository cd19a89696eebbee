package netguard

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckAddr: every form of a non-public address is refused, public
// ones pass, and Allowed opens a network.
func TestCheckAddr(t *testing.T) {
	var g Guard
	for _, s := range []string{
		"127.0.0.1", "127.1.2.3", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1",
		"169.254.169.254", "100.100.100.200", "0.0.0.0", "255.255.255.255", "224.0.0.1",
		"::1", "::", "fe80::1", "fd00:ec2::254", "fc00::1", "ff02::1",
		"::ffff:127.0.0.1", "::ffff:169.254.169.254", "::ffff:10.0.0.1", // IPv4-mapped
		"64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", // NAT64 of loopback, metadata
		"2002:7f00:1::1", "2002:c0a8:101::1", // 6to4 of loopback, 192.168.1.1
		"::127.0.0.1", // IPv4-compatible
		"fe80::1%eth0",
		"::ffff:0:127.0.0.1", "::ffff:0:169.254.169.254", "::ffff:0:10.0.0.1", // IPv4-translated
		"2001:db8::1", "3fff::1", // documentation
		"198.18.0.1", "2001:2::1", // benchmarking
		"2001:20::1", "2001:10::1", // ORCHIDv2, ORCHID
		"192.31.196.1", "192.175.48.1", "2001:4:112::1", "2620:4f:8000::1", // AS112
		"5f00::1", // SRv6
	} {
		a := netip.MustParseAddr(s)
		err := g.CheckAddr(a)
		assert.ErrorIs(t, err, ErrBlocked, s)
	}
	for _, s := range []string{"8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "64:ff9b::808:808", "2002:808:808::1", "::ffff:8.8.8.8", "::ffff:0:8.8.8.8"} {
		assert.NoError(t, g.CheckAddr(netip.MustParseAddr(s)), s)
	}
	g.Allowed = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	assert.NoError(t, g.CheckAddr(netip.MustParseAddr("127.0.0.1")))
	assert.NoError(t, g.CheckAddr(netip.MustParseAddr("::ffff:127.0.0.1")), "the mapped form of an allowed address")
	assert.ErrorIs(t, g.CheckAddr(netip.MustParseAddr("::1")), ErrBlocked, "only the network allowed")
	assert.ErrorIs(t, g.CheckAddr(netip.MustParseAddr("10.0.0.1")), ErrBlocked)
}

// fakeDNS resolves names from a table.
func fakeDNS(table map[string][]string) func(context.Context, string) ([]netip.Addr, error) {
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		ss, ok := table[strings.ToLower(host)]
		if !ok {
			return nil, errors.New("no such host")
		}
		var out []netip.Addr
		for _, s := range ss {
			out = append(out, netip.MustParseAddr(s))
		}
		return out, nil
	}
}

// TestCheckURL: the URL's form, and the addresses of its host, literal or
// resolved (every one of them).
func TestCheckURL(t *testing.T) {
	g := Guard{Lookup: fakeDNS(map[string][]string{
		"hooks.example.com":   {"93.184.216.34"},
		"rebind.example.com":  {"93.184.216.34", "10.0.0.7"},
		"v6.example.com":      {"fd00:ec2::254"},
		"metadata.google.int": {"169.254.169.254"},
		"localhost":           {"127.0.0.1", "::1"},
		"empty.example.com":   {},
	})}
	ctx := t.Context()
	for _, c := range []struct{ url, want string }{
		{"https://hooks.example.com/a2a", ""},
		{"http://93.184.216.34:8080/x", ""},
		{"https://[2606:4700:4700::1111]/x", ""},
		{"ftp://hooks.example.com/", "http or https"},
		{"https:///path", "host"},
		{"https://user:pw@hooks.example.com/", "credentials"},
		{"https://127.0.0.1/", "not a public address"},
		{"https://[::1]:9000/", "not a public address"},
		{"https://[::ffff:127.0.0.1]/", "not a public address"},
		{"https://169.254.169.254/latest/meta-data/", "not a public address"},
		{"https://[fe80::1%25eth0]/", "not a public address"},
		{"https://localhost/", "not a public address"},
		{"https://LOCALHOST./", "not a public address"},
		{"https://app.localhost/", "not a public address"},
		{"https://rebind.example.com/", "10.0.0.7"},
		{"https://v6.example.com/", "not a public address"},
		{"https://metadata.google.int/", "not a public address"},
		{"https://nowhere.example.com/", "does not resolve"},
		{"https://empty.example.com/", "no address"},
		{"https://0x7f000001/", "does not resolve"}, // not an address to Go: a name, and no such host
		{"https://" + strings.Repeat("a", MaxURL) + ".com/", "longer than"},
		{"%", "not a URL"},
	} {
		_, err := g.CheckURL(ctx, c.url)
		if c.want == "" {
			assert.NoError(t, err, c.url)
			continue
		}
		require.Error(t, err, c.url)
		assert.Contains(t, err.Error(), c.want, c.url)
	}
	g.Allowed = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	_, err := g.CheckURL(ctx, "http://localhost:8080/hook")
	assert.NoError(t, err, "loopback allowed")
}

// TestTransportChecksEachDial: a connection is checked where it is made,
// whatever the URL was when it was checked: a loopback server is refused,
// and reached once allowed; a name resolving to it is refused too.
func TestTransportChecksEachDial(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(srv.Close)
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]

	var g Guard
	g.Lookup = fakeDNS(map[string][]string{"hooks.example.com": {"127.0.0.1"}})
	c := &http.Client{Transport: g.Transport(2 * time.Second)}
	for _, u := range []string{srv.URL, "http://hooks.example.com:" + port + "/"} {
		_, err := c.Get(u)
		require.Error(t, err, u)
		assert.ErrorIs(t, err, ErrBlocked, u)
	}
	g.Allowed = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	c = &http.Client{Transport: g.Transport(2 * time.Second)}
	for _, u := range []string{srv.URL, "http://hooks.example.com:" + port + "/"} {
		resp, err := c.Get(u)
		require.NoError(t, err, u)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	}
}

// FuzzCheckURL: CheckURL never panics, and a URL it accepts names an
// http(s) host that is public (with no resolver able to say otherwise:
// every name resolves to a loopback address here, so only literal public
// addresses pass).
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"https://93.184.216.34/", "http://[::ffff:7f00:1]/", "https://[64:ff9b::a9fe:a9fe]/", "http://10.0.0.1:80/", "https://a.example/", "http://[fe80::1%25en0]/", "https://1.1.1.1@127.0.0.1/"} {
		f.Add(s)
	}
	g := Guard{Lookup: func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := g.CheckURL(context.Background(), raw)
		if err != nil {
			return
		}
		a, perr := netip.ParseAddr(u.Hostname())
		if perr != nil {
			t.Fatalf("%q accepted, but its host %q resolves to loopback here", raw, u.Hostname())
		}
		if g.CheckAddr(a) != nil {
			t.Fatalf("%q accepted with a non-public address", raw)
		}
		a = a.Unmap()
		if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsUnspecified() || a.IsMulticast() {
			t.Fatalf("%q accepted with %s", raw, a)
		}
	})
}
