package oauth_test

// The fixtures of this package's tests: an authorization server written
// here (httptest, serving RFC 8414 metadata, OpenID Connect discovery, a
// JWKS and an introspection endpoint, each of which a test can change,
// break or count), the keys it signs with, and a protected server that
// answers as every wire format's handler does once it asks otc.Challenge
// for its WWW-Authenticate values.

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/oauth"
)

const (
	resource = "http://127.0.0.1:8080/mcp"
	prmURL   = "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"
	// The plain challenge of every 401.
	plainChallenge = `Bearer resource_metadata="` + prmURL + `"`
)

// Key ids of the authorization server's keys.
const (
	kidRSA     = "rsa-2048"
	kidRSA2    = "rsa-2048-next"
	kidEC      = "ec-p256"
	kidEC384   = "ec-p384"
	kidED      = "ed25519"
	kidRSA1024 = "rsa-1024"
)

// testKeys are the authorization server's keys, and others that must
// never verify its tokens.
type testKeys struct {
	rsa, rsa2, rsa1024, rsaOther *rsa.PrivateKey
	ec, ec384, ecOther           *ecdsa.PrivateKey
	ed                           ed25519.PrivateKey
}

var keysOnce = sync.OnceValues(func() (testKeys, error) {
	var k testKeys
	var errs [8]error
	k.rsa, errs[0] = rsa.GenerateKey(rand.Reader, 2048)
	k.rsa2, errs[1] = rsa.GenerateKey(rand.Reader, 2048)
	k.rsa1024, errs[2] = rsa.GenerateKey(rand.Reader, 1024)
	k.rsaOther, errs[3] = rsa.GenerateKey(rand.Reader, 2048)
	k.ec, errs[4] = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	k.ec384, errs[5] = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	k.ecOther, errs[6] = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, k.ed, errs[7] = ed25519.GenerateKey(rand.Reader)
	return k, errors.Join(errs[:]...)
})

func keys(t testing.TB) testKeys {
	t.Helper()
	k, err := keysOnce()
	require.NoError(t, err)
	return k
}

// jwk returns the JWK of a public key with kid and no "alg".
func jwk(t testing.TB, key any, kid string) jwkset.JWKMarshal {
	t.Helper()
	j, err := jwkset.NewJWKFromKey(key, jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{KID: kid}})
	require.NoError(t, err)
	return j.Marshal()
}

// usualJWKs is the authorization server's key set: the kinds of keys it
// signs with, and an RSA key too short to verify anything.
func usualJWKs(t testing.TB) []jwkset.JWKMarshal {
	k := keys(t)
	return []jwkset.JWKMarshal{
		jwk(t, &k.rsa.PublicKey, kidRSA),
		jwk(t, &k.ec.PublicKey, kidEC),
		jwk(t, &k.ec384.PublicKey, kidEC384),
		jwk(t, k.ed.Public(), kidED),
		jwk(t, &k.rsa1024.PublicKey, kidRSA1024),
	}
}

func jwksJSON(t testing.TB, keys ...jwkset.JWKMarshal) []byte {
	t.Helper()
	b, err := json.Marshal(jwkset.JWKSMarshal{Keys: keys})
	require.NoError(t, err)
	return b
}

// authServer is an authorization server for the tests. Its issuer is its
// URL plus path; it serves its metadata at the well-known URLs that
// metadataAt lists (by default RFC 8414's), its key set at /jwks and an
// introspection endpoint at /introspect for the client "rs" with secret
// "s3cret".
type authServer struct {
	srv    *httptest.Server
	issuer string

	mu          sync.Mutex
	metadataAt  map[string]bool // paths that serve the metadata
	docIssuer   string          // the "issuer" the metadata states; "" means the real one
	metaStatus  int             // when not 0, every metadata path answers it
	noJWKSURI   bool            // the metadata names no jwks_uri
	jwks        []byte
	jwksStatus  int
	active      map[string]map[string]any // introspection answers by token
	introStatus int                       // when not 0, the endpoint answers it
	introDelay  time.Duration             // before answering
	rawAnswers  map[string]string         // introspection answers sent as written, by token
	postSecret  bool                      // expect client_secret_post
	hits        map[string]int            // requests by path
	asked       map[string]int            // introspections by token
	// padding, by path, is a member of that many bytes added to the JSON
	// answered there, to make it too long.
	padding map[string]int
}

func newAuthServer(t *testing.T, path string) *authServer {
	t.Helper()
	as := &authServer{
		metadataAt: map[string]bool{},
		jwks:       jwksJSON(t, usualJWKs(t)...),
		active:     map[string]map[string]any{},
		hits:       map[string]int{},
		asked:      map[string]int{},
		padding:    map[string]int{},
	}
	as.srv = httptest.NewServer(http.HandlerFunc(as.serve))
	t.Cleanup(as.srv.Close)
	as.issuer = as.srv.URL + path
	as.metadataAt["/.well-known/oauth-authorization-server"+path] = true
	return as
}

func (as *authServer) serve(w http.ResponseWriter, r *http.Request) {
	as.mu.Lock()
	as.hits[r.URL.Path]++
	if n := as.padding[r.URL.Path]; n > 0 {
		w = &padded{ResponseWriter: w, n: n}
	}
	switch {
	case as.metadataAt[r.URL.Path]:
		status := as.metaStatus
		doc := map[string]any{
			"issuer":                 as.issuer,
			"jwks_uri":               as.srv.URL + "/jwks",
			"introspection_endpoint": as.srv.URL + "/introspect",
			"token_endpoint":         as.srv.URL + "/token",
		}
		if as.docIssuer != "" {
			doc["issuer"] = as.docIssuer
		}
		if as.noJWKSURI {
			delete(doc, "jwks_uri")
		}
		as.mu.Unlock()
		if status != 0 {
			w.WriteHeader(status)
			return
		}
		writeJSON(w, doc)
	case r.URL.Path == "/jwks":
		status, body := as.jwksStatus, as.jwks
		as.mu.Unlock()
		if status != 0 {
			w.WriteHeader(status)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	case r.URL.Path == "/introspect":
		status, delay, post := as.introStatus, as.introDelay, as.postSecret
		as.mu.Unlock()
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		if status != 0 {
			w.WriteHeader(status)
			return
		}
		if r.Method != http.MethodPost || r.ParseForm() != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		id, secret, ok := r.BasicAuth()
		if post {
			id, secret, ok = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret"), r.Header.Get("Authorization") == ""
		}
		if !ok || id != "rs" || secret != "s3cret" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		as.mu.Lock()
		as.asked[r.PostForm.Get("token")]++
		ans, found := as.active[r.PostForm.Get("token")]
		raw, isRaw := as.rawAnswers[r.PostForm.Get("token")]
		as.mu.Unlock()
		if isRaw {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, raw)
			return
		}
		if !found {
			writeJSON(w, map[string]any{"active": false})
			return
		}
		writeJSON(w, ans)
	default:
		as.mu.Unlock()
		http.NotFound(w, r)
	}
}

// padded adds a member of n bytes to the JSON object written through it.
type padded struct {
	http.ResponseWriter
	n int
}

func (p *padded) Write(b []byte) (int, error) {
	if i := bytes.IndexByte(b, '{'); i >= 0 {
		pad := append([]byte(`{"x_padding":"`+strings.Repeat("p", p.n)+`"`), b[i+1:]...)
		if len(bytes.TrimSpace(b[i+1:])) > 0 && bytes.TrimSpace(b[i+1:])[0] != '}' {
			pad = append([]byte(`{"x_padding":"`+strings.Repeat("p", p.n)+`",`), b[i+1:]...)
		}
		_, err := p.ResponseWriter.Write(append(b[:i:i], pad...))
		return len(b), err
	}
	return p.ResponseWriter.Write(b)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// set changes the server under its lock.
func (as *authServer) set(f func(as *authServer)) {
	as.mu.Lock()
	defer as.mu.Unlock()
	f(as)
}

// count returns the requests made so far to path.
func (as *authServer) count(path string) int {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.hits[path]
}

// introspected returns how many times token was introspected.
func (as *authServer) introspected(token string) int {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.asked[token]
}

// metadataHits counts the requests for metadata, at any well-known URL.
func (as *authServer) metadataHits() int {
	as.mu.Lock()
	defer as.mu.Unlock()
	n := 0
	for p, c := range as.hits {
		if strings.Contains(p, "/.well-known/") {
			n += c
		}
	}
	return n
}

// activate makes the introspection endpoint answer for token.
func (as *authServer) activate(token string, answer map[string]any) {
	as.set(func(as *authServer) { as.active[token] = answer })
}

// claims are the usual claims of an access token of as for resource.
func (as *authServer) claims(edit func(c jwt.MapClaims)) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{
		"iss":       as.issuer,
		"sub":       "user-42",
		"client_id": "mcp-client",
		"aud":       resource,
		"scope":     "counter:read counter:write",
		"iat":       now.Unix(),
		"exp":       now.Add(time.Hour).Unix(),
		"jti":       "at-1",
	}
	if edit != nil {
		edit(c)
	}
	return c
}

// sign signs claims with key under kid, typed typ ("" for no typ).
func sign(t testing.TB, method jwt.SigningMethod, key any, kid, typ string, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	delete(tok.Header, "typ")
	if typ != "" {
		tok.Header["typ"] = typ
	}
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	require.NoError(t, err)
	return s
}

// token is an RS256 access token of as, typed at+jwt, with its usual
// claims edited by edit.
func (as *authServer) token(t testing.TB, edit func(c jwt.MapClaims)) string {
	t.Helper()
	return sign(t, jwt.SigningMethodRS256, keys(t).rsa, kidRSA, "at+jwt", as.claims(edit))
}

// newAuth returns an authenticator for as's tokens with the fetch
// intervals shortened, its logs discarded unless opts has a logger.
func newAuth(t *testing.T, opts oauth.Options, timing oauth.TimingForTest) *oauth.Authenticator {
	t.Helper()
	if opts.Resource == "" {
		opts.Resource = resource
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	a, err := oauth.NewForTest(t.Context(), opts, timing)
	require.NoError(t, err)
	return a
}

// seen is what the protected server answers for an accepted request.
type seen struct {
	Method string         `json:"method"`
	Name   string         `json:"name"`
	Scopes []string       `json:"scopes"`
	Claims map[string]any `json:"claims"`
}

// response is one answer of the protected server.
type response struct {
	Status     int
	Challenge  []string // the WWW-Authenticate lines
	RetryAfter string   // the Retry-After header
	Message    string
	Reason     string
	Seen       seen
	Raw        string
}

// newProtected serves a protected resource behind a: it authenticates
// every request with otc.Authenticate and answers a refusal with the
// error's status and otc.Challenge's WWW-Authenticate value, as the
// handlers of every wire format do, and an accepted request with the
// caller's identity.
func newProtected(t *testing.T, a otc.Authenticator) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, e := otc.Authenticate(a, r)
		if e != nil {
			if c := otc.Challenge(a, e); c != "" {
				w.Header().Set("WWW-Authenticate", c)
			}
			if e.RetryAfter > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(int(e.RetryAfter.Round(time.Second)/time.Second)))
			}
			w.WriteHeader(e.Code.HTTPStatus())
			writeJSON(w, map[string]string{"message": e.Message, "reason": e.Reason})
			return
		}
		id := otc.CallerIdentity(r.Context())
		writeJSON(w, seen{Method: id.Method, Name: id.Name, Scopes: id.Scopes(), Claims: id.Claims})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// call sends a request with the given Authorization header lines (none
// for nil) to srv.
func call(t *testing.T, srv *httptest.Server, authorization ...string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/mcp", strings.NewReader("{}"))
	require.NoError(t, err)
	for _, v := range authorization {
		req.Header.Add("Authorization", v)
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	res := response{Status: resp.StatusCode, Challenge: resp.Header.Values("WWW-Authenticate"), RetryAfter: resp.Header.Get("Retry-After"), Raw: string(raw)}
	if resp.StatusCode == http.StatusOK {
		require.NoError(t, json.Unmarshal(raw, &res.Seen))
	} else {
		var body struct{ Message, Reason string }
		require.NoError(t, json.Unmarshal(raw, &body))
		res.Message, res.Reason = body.Message, body.Reason
	}
	return res
}

func bearer(token string) string { return "Bearer " + token }

// requireAccepted checks an accepted request and returns who it was.
func requireAccepted(t *testing.T, res response) seen {
	t.Helper()
	require.Equal(t, http.StatusOK, res.Status, "refused: %s", res.Raw)
	return res.Seen
}

// assertUnavailable checks the answer to a request whose token could not
// be checked just now: 503 with Retry-After, no challenge (the token was
// not refused), the message containing want and not quoting any of
// leaks.
func assertUnavailable(t *testing.T, res response, want string, leaks ...string) {
	t.Helper()
	assert.Equal(t, http.StatusServiceUnavailable, res.Status, "answer: %s", res.Raw)
	assert.Equal(t, "1", res.RetryAfter)
	assert.Empty(t, res.Challenge)
	assert.Contains(t, strings.ToLower(res.Message), strings.ToLower(want))
	for _, l := range leaks {
		assert.NotContains(t, res.Raw, l)
	}
}

// assertRefused checks a refusal of a token that was sent: 401, reason
// invalid_token, the message containing want, the challenge naming the
// metadata with error="invalid_token" and the message as description,
// and neither quoting any of leaks.
func assertRefused(t *testing.T, res response, want string, leaks ...string) {
	t.Helper()
	assert.Equal(t, http.StatusUnauthorized, res.Status, "answer: %s", res.Raw)
	assert.Equal(t, otc.ReasonInvalidToken, res.Reason)
	assert.Contains(t, strings.ToLower(res.Message), strings.ToLower(want))
	assert.Equal(t, []string{plainChallenge + `, error="invalid_token", error_description="` + describe(res.Message) + `"`}, res.Challenge)
	for _, l := range leaks {
		if l == "" {
			continue
		}
		assert.NotContains(t, res.Raw, l, "the answer quotes the token")
		for _, c := range res.Challenge {
			assert.NotContains(t, c, l, "the challenge quotes the token")
		}
		// A part of a JWT is as telling as the whole.
		for part := range strings.SplitSeq(l, ".") {
			if len(part) > 16 {
				assert.NotContains(t, res.Raw+strings.Join(res.Challenge, ""), part)
			}
		}
	}
}

// describe is what an error_description makes of a message: the
// messages of this package hold only printable ASCII, and a double
// quote becomes a single one.
func describe(msg string) string { return strings.ReplaceAll(msg, `"`, "'") }

// retry calls srv with token every 20 ms until it is accepted or within
// has passed, and returns the last answer and the refusals before it.
func retry(t *testing.T, srv *httptest.Server, token string, within time.Duration) (last response, refused []response) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		last = call(t, srv, bearer(token))
		if last.Status == http.StatusOK || time.Now().After(deadline) {
			return last, refused
		}
		refused = append(refused, last)
		time.Sleep(20 * time.Millisecond)
	}
}
