package jwks

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJWKSDefaultTiming: the intervals are the ones CapabilityOptions
// documents, and they keep the bars: a key published after a
// made-up kid's fetch, and an issuer back from an outage, are seen within
// 45 seconds.
func TestJWKSDefaultTiming(t *testing.T) {
	t.Parallel()
	d := DefaultTiming(0)
	assert.Equal(t, Timing{Refresh: time.Hour, MinGap: 5 * time.Second, BackoffMin: time.Second, BackoffMax: 30 * time.Second, Wait: 5 * time.Second}, d)
	assert.Equal(t, 10*time.Minute, DefaultTiming(10*time.Minute).Refresh)

	var retries []time.Duration
	for n := 1; n <= 8; n++ {
		retries = append(retries, d.RetryAfter(n))
	}
	s := time.Second
	assert.Equal(t, []time.Duration{s, 2 * s, 4 * s, 8 * s, 16 * s, 30 * s, 30 * s, 30 * s}, retries)
	assert.Equal(t, 30*time.Second, d.RetryAfter(1000), "no overflow after many failures")

	// The issuer comes back while a fetch hangs: that fetch ends within the
	// fetch timeout, and the next starts at most the backoff cap later.
	assert.Less(t, FetchTimeout+d.BackoffMax, 45*time.Second)
	assert.Less(t, d.MinGap+FetchTimeout, 45*time.Second)

	// A retry never waits longer than a refresh would.
	short := DefaultTiming(3 * time.Second)
	assert.Equal(t, 3*time.Second, short.RetryAfter(5))
	assert.Equal(t, time.Second, short.RetryAfter(1))
}

// TestRemoteFromResolver: the resolver runs at the start of every fetch,
// with rediscover true for scheduled fetches and false for one a token's
// unknown kid asked for; its failure fails the fetch, logged under the
// set's label; an empty URL is a set without keys; Ready waits for the
// first fetch.
func TestRemoteFromResolver(t *testing.T) {
	t.Parallel()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	jwk, err := jwkset.NewJWKFromKey(&key.PublicKey, jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{KID: "k1"}})
	require.NoError(t, err)
	body, err := json.Marshal(jwkset.JWKSMarshal{Keys: []jwkset.JWKMarshal{jwk.Marshal()}})
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) }))
	t.Cleanup(srv.Close)
	timing := Timing{Refresh: time.Hour, MinGap: 50 * time.Millisecond, BackoffMin: time.Hour, BackoffMax: time.Hour, Wait: 5 * time.Second}

	t.Run("found", func(t *testing.T) {
		t.Parallel()
		var mu sync.Mutex
		var calls []bool
		resolve := func(_ context.Context, rediscover bool) (string, string, error) {
			mu.Lock()
			defer mu.Unlock()
			calls = append(calls, rediscover)
			return srv.URL, "shown", nil
		}
		ks := RemoteFrom(t.Context(), resolve, "the test set", srv.Client(), time.Second, slog.New(slog.DiscardHandler), timing)
		require.NoError(t, ks.Ready(t.Context()))
		_, err := ks.Key(t.Context(), "k1")
		require.NoError(t, err)
		time.Sleep(timing.MinGap)
		_, err = ks.Key(t.Context(), "unknown")
		assert.ErrorIs(t, err, ErrKeyUnknown)
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, []bool{true, false}, calls, "the first fetch is scheduled, the kid's is not")
	})

	t.Run("failed", func(t *testing.T) {
		t.Parallel()
		var logs bytes.Buffer
		var mu sync.Mutex
		logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil))
		resolve := func(context.Context, bool) (string, string, error) {
			return "", "https://as.test/.well-known/x", errors.New("no metadata")
		}
		ks := RemoteFrom(t.Context(), resolve, "the test set", srv.Client(), time.Second, logger, timing)
		assert.ErrorIs(t, ks.Ready(t.Context()), ErrKeyRefetchFailed)
		assert.True(t, ks.Empty())
		mu.Lock()
		defer mu.Unlock()
		assert.Contains(t, logs.String(), "fetching the test set failed")
		assert.Contains(t, logs.String(), "no metadata")
	})

	t.Run("none_published", func(t *testing.T) {
		t.Parallel()
		resolve := func(context.Context, bool) (string, string, error) { return "", "", nil }
		ks := RemoteFrom(t.Context(), resolve, "the test set", srv.Client(), time.Second, slog.New(slog.DiscardHandler), timing)
		require.NoError(t, ks.Ready(t.Context()))
		assert.True(t, ks.Empty())
		_, err := ks.Key(t.Context(), "k1")
		assert.Error(t, err)
	})

	t.Run("stopped", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		resolve := func(ctx context.Context, _ bool) (string, string, error) { return "", "", ctx.Err() }
		ks := RemoteFrom(ctx, resolve, "the test set", srv.Client(), time.Second, slog.New(slog.DiscardHandler), timing)
		err := ks.Ready(t.Context())
		require.Error(t, err)
		assert.True(t, errors.Is(err, ErrStopped) || errors.Is(err, ErrKeyRefetchFailed), "got %v", err)
	})
}

// lockedWriter serialises a log handler's writes with the test's reads.
type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestProblem: each reason a token's key could not be found has its
// message, naming whose keys they are and whether to try again; other
// errors have none.
func TestProblem(t *testing.T) {
	for err, want := range map[error]string{
		ErrNoKeys:           "The server has not obtained the issuers' keys yet, so it cannot check the bearer token: try again later",
		ErrKeysPending:      "The server is still fetching the issuers' keys and could not check the bearer token in time: try again in a few seconds",
		ErrKeyNotRefetched:  "The bearer token's key (kid) is not one of the issuers' keys that this server holds; their key set was fetched moments ago, so if the key has just been published, try again in a few seconds",
		ErrKeyRefetchFailed: "The bearer token's key (kid) is not one of the issuers' keys that this server holds, and fetching their key set again failed: try again later",
		ErrKeyUnknown:       "The bearer token's key (kid) is not one of the issuers' keys",
	} {
		got, ok := Problem(fmt.Errorf("verifying: %w", err), "the issuers'")
		if !ok || got != want {
			t.Errorf("Problem(%v) = %q, %v; want %q", err, got, ok, want)
		}
	}
	if got, ok := Problem(ErrStopped, "the issuers'"); ok {
		t.Errorf("Problem(ErrStopped) = %q, want none", got)
	}
}
