package caller

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
)

var proxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8:ffff::/48")}

// TestClient: the client of a request, read from the peer and, from a
// trusted peer, X-Forwarded-For in each form proxies write it.
func TestClient(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, peer string
		xff        []string
		want       string
	}{
		{"peer", "198.51.100.7:4711", nil, "198.51.100.7"},
		{"untrusted_peer_ignores_header", "198.51.100.7:4711", []string{"203.0.113.9"}, "198.51.100.7"},
		{"trusted_peer_alone", "10.0.0.2:80", nil, "10.0.0.2"},
		{"plain", "10.0.0.2:80", []string{"203.0.113.9"}, "203.0.113.9"},
		{"with_port", "10.0.0.2:80", []string{"203.0.113.9:5555"}, "203.0.113.9"},
		{"bracketed_v6_port", "10.0.0.2:80", []string{"[2001:db8:1:2::9]:5555"}, "2001:db8:1:2::/64"},
		{"bracketed_v6", "10.0.0.2:80", []string{"[2001:db8:1:2::9]"}, "2001:db8:1:2::/64"},
		{"bare_v6", "10.0.0.2:80", []string{"2001:db8:1:2::9"}, "2001:db8:1:2::/64"},
		{"quoted", "10.0.0.2:80", []string{`"[2001:db8:1:2::9]:80"`}, "2001:db8:1:2::/64"},
		{"zone", "10.0.0.2:80", []string{"fe80::1%eth0"}, "fe80::/64"},
		{"mapped_v4", "10.0.0.2:80", []string{"::ffff:203.0.113.9"}, "203.0.113.9"},
		{"rightmost_untrusted", "10.0.0.2:80", []string{"1.1.1.1, 203.0.113.9, 10.0.0.7"}, "203.0.113.9"},
		{"across_lines", "10.0.0.2:80", []string{"1.1.1.1", "203.0.113.9,10.0.0.7"}, "203.0.113.9"},
		{"empty_entries", "10.0.0.2:80", []string{"203.0.113.9, ,"}, "203.0.113.9"},
		{"all_trusted", "10.0.0.2:80", []string{"10.1.1.1, 10.0.0.7"}, "10.1.1.1"},
		{"v6_proxy", "[2001:db8:ffff::1]:80", []string{"203.0.113.9"}, "203.0.113.9"},
		// Entries that are no address are their own client, never the
		// proxy's: a client cannot share the proxy's allowance.
		{"leading_zeros", "10.0.0.2:80", []string{"010.000.000.001"}, `"010.000.000.001"`},
		{"hex", "10.0.0.2:80", []string{"0x7f.1"}, `"0x7f.1"`},
		{"unknown", "10.0.0.2:80", []string{"unknown"}, `"unknown"`},
		{"long_text", "10.0.0.2:80", []string{strings.Repeat("x", 500)}, `"` + strings.Repeat("x", maxText) + `"`},
		{"peer_not_address", "@", nil, `"@"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got string
			h := Handler(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = Client(r) }), &Options{TrustedProxies: proxies})
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tc.peer
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			h.ServeHTTP(httptest.NewRecorder(), r)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestIPv6Bits: IPv6 clients are grouped by the prefix the options give;
// without a Handler, by /64.
func TestIPv6Bits(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "[2001:db8:1:2:3:4:5:6]:80"
	assert.Equal(t, "2001:db8:1:2::/64", Client(r), "no Handler: the default")
	for bits, want := range map[int]string{48: "2001:db8:1::/48", 128: "2001:db8:1:2:3:4:5:6", 64: "2001:db8:1:2::/64"} {
		var got string
		Handler(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = Client(r) }), &Options{IPv6Bits: bits}).ServeHTTP(httptest.NewRecorder(), r)
		assert.Equal(t, want, got, bits)
	}
	for _, bits := range []int{-1, 129} {
		assert.PanicsWithValue(t, "caller: Options.IPv6Bits is "+strconv.Itoa(bits)+"; give the prefix length (1 to 128) an IPv6 client is known by, such as 64", func() {
			Handler(http.NotFoundHandler(), &Options{IPv6Bits: bits})
		})
	}
}

// TestKey: one key per caller, whoever it is.
func TestKey(t *testing.T) {
	t.Parallel()
	key := func(id *otc.Identity, r *http.Request) string {
		t.Helper()
		ctx := context.Background()
		if id != nil {
			ctx = otc.WithIdentity(ctx, id)
		}
		k, err := Key(ctx, r)
		require.NoError(t, err)
		return k
	}
	from := func(addr string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = addr
		return r
	}
	assert.Equal(t, "a", key(nil, nil), "anonymous, not over HTTP")
	assert.Equal(t, "a:198.51.100.7", key(nil, from("198.51.100.7:1")))
	assert.Equal(t, key(nil, from("[2001:db8::1]:1")), key(nil, from("[2001:db8::2]:2")), "one /64, one caller")
	assert.NotEqual(t, key(nil, from("198.51.100.7:1")), key(nil, from("198.51.100.8:1")))

	a := key(&otc.Identity{Method: "api_key", Name: "alice"}, from("198.51.100.7:1"))
	assert.Equal(t, a, key(&otc.Identity{Method: "api_key", Name: "alice"}, from("203.0.113.1:1")), "an identity is the same caller from anywhere")
	assert.NotEqual(t, a, key(&otc.Identity{Method: "api_key", Name: "bob"}, nil))
	assert.NotEqual(t, key(&otc.Identity{Method: "a", Name: "b:c"}, nil), key(&otc.Identity{Method: "a:b", Name: "c"}, nil), "no identity spells another's key")
	assert.NotEqual(t, key(&otc.Identity{Method: "api_key", Name: "198.51.100.7"}, nil), key(nil, from("198.51.100.7:1")), "nor an address's")

	// A subject never equals a client id, nor one issuer's subject
	// another's.
	token := func(claims map[string]any) *otc.Identity { return &otc.Identity{Method: "oauth", Claims: claims} }
	bySub := key(token(map[string]any{"iss": "https://as.test", "sub": "alice", "client_id": "evilapp"}), nil)
	byClient := key(token(map[string]any{"iss": "https://as.test", "client_id": "alice"}), nil)
	assert.NotEqual(t, bySub, byClient)
	assert.NotEqual(t, bySub, key(token(map[string]any{"iss": "https://other.test", "sub": "alice"}), nil))
	assert.Equal(t, bySub, key(token(map[string]any{"iss": "https://as.test", "sub": "alice", "client_id": "otherapp"}), nil), "the subject names the caller, whatever its client")

	// A credential that names no one is no one's.
	for _, id := range []*otc.Identity{
		token(map[string]any{"iss": "https://as.test"}),
		token(map[string]any{"iss": "https://as.test", "sub": ""}),
		{Method: "api_key"},
	} {
		_, err := Key(otc.WithIdentity(context.Background(), id), from("198.51.100.7:1"))
		assert.ErrorIs(t, err, ErrUnnamed, "%+v", id)
	}
}

// FuzzClient: whatever the peer and X-Forwarded-For say, the client is
// an address (a network for IPv6) or a quoted text of bounded length,
// and a peer that is not trusted is the client whatever the header says.
func FuzzClient(f *testing.F) {
	f.Add("10.0.0.2:80", "203.0.113.9, 10.0.0.7", "")
	f.Add("10.0.0.2:80", "[2001:db8::1]:80", "unknown")
	f.Add("198.51.100.7:1", "1.2.3.4", "")
	f.Add("[2001:db8:ffff::1]:80", `"0x7f.1", ,`, "::ffff:1.2.3.4")
	f.Add("@", "", "")
	f.Fuzz(func(t *testing.T, peer, line1, line2 string) {
		addr, text := clientOf(peer, []string{line1, line2}, proxies)
		if addr.IsValid() {
			if text != "" {
				t.Fatalf("both an address %v and a text %q", addr, text)
			}
			if addr.Zone() != "" || addr.Is4In6() {
				t.Fatalf("address %v not normalised", addr)
			}
			if g := appendGroup(nil, addr, DefaultIPv6Bits); len(g) == 0 {
				t.Fatal("no group")
			}
		} else if len(text) < 2 || text[0] != '"' || len(text) > 4*maxText+2 || !utf8.ValidString(text) {
			t.Fatalf("text %q is not a bounded quoted string", text)
		}
		if p, ok := parseHop(peer); ok && !trusted(p, proxies) && addr != p {
			t.Fatalf("an untrusted peer %v was replaced by %v", p, addr)
		}
	})
}
