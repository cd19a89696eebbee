package testkit

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Visit is a request that reached a [RedirectTrap]'s other origin.
type Visit struct {
	Method, Path string
	Header       http.Header
	Body         string
}

// RedirectTrap is a server whose every request is redirected to another
// loopback origin (the same IP on another port, or localhost), which
// records what reaches it and answers 200 with an empty JSON object.
type RedirectTrap struct {
	// URL is the redirecting server's base.
	URL string
	// Other is the base of the recording server.
	Other  string
	mu     sync.Mutex
	visits []Visit
}

// NewRedirectTrap starts a trap that answers every request with status
// (307 or 308 keep the method and body) and a Location on the other
// origin with the same path, or with the path given by to when it is not
// empty. viaLocalhost names the other origin "localhost" rather than its
// IP.
func NewRedirectTrap(t testing.TB, status int, viaLocalhost bool, to string) *RedirectTrap {
	t.Helper()
	rt := &RedirectTrap{}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rt.mu.Lock()
		rt.visits = append(rt.visits, Visit{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: string(b)})
		rt.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "{}")
	}))
	t.Cleanup(other.Close)
	rt.Other = other.URL
	if viaLocalhost {
		rt.Other = strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	}
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		if to != "" {
			path = to
		}
		w.Header().Set("Location", rt.Other+path)
		w.WriteHeader(status)
	}))
	t.Cleanup(first.Close)
	rt.URL = first.URL
	return rt
}

// Visits returns what reached the other origin.
func (rt *RedirectTrap) Visits() []Visit {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return append([]Visit(nil), rt.visits...)
}
