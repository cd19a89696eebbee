package testkit

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// LegacySSE is a server of MCP's HTTP+SSE transport of 2024-11-05, as
// such servers serve it: GET /sse opens a session's event stream, whose
// first event names /message?sessionId=…; a POST there is accepted
// (202) and handed to the session, whose answers, requests and
// notifications come on the stream; a POST to /sse (a Streamable HTTP
// client's) is 404. Each session is serve run over a pair of pipes, as a
// stdio server is.
type LegacySSE struct {
	*httptest.Server
	// Endpoint, when set, is named instead of the session's endpoint.
	Endpoint string
	// Silent, when set, accepts messages without handing them on: no
	// answer ever comes.
	Silent atomic.Bool
	// Opened counts the streams opened, and Posts the POSTs to /sse.
	Opened, Posts atomic.Int32

	serve    func(ctx context.Context, in io.Reader, out io.Writer)
	mu       sync.Mutex
	sessions map[string]*legacySession
}

type legacySession struct {
	in     *io.PipeWriter
	cancel context.CancelFunc
}

// NewLegacySSE starts a LegacySSE whose sessions serve runs (the mcp
// package's Serve of a registry, say), closed when the test ends.
func NewLegacySSE(t testing.TB, serve func(ctx context.Context, in io.Reader, out io.Writer)) *LegacySSE {
	t.Helper()
	l := &LegacySSE{serve: serve, sessions: map[string]*legacySession{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /sse", l.stream)
	mux.HandleFunc("POST /sse", func(w http.ResponseWriter, r *http.Request) {
		l.Posts.Add(1)
		http.NotFound(w, r)
	})
	mux.HandleFunc("POST /message", l.message)
	l.Server = httptest.NewServer(mux)
	t.Cleanup(l.Close)
	t.Cleanup(l.Drop)
	return l
}

func (l *LegacySSE) stream(w http.ResponseWriter, r *http.Request) {
	l.Opened.Add(1)
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		l.serve(ctx, inR, outW)
		outW.Close()
	}()
	l.mu.Lock()
	l.sessions[id] = &legacySession{in: inW, cancel: cancel}
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		delete(l.sessions, id)
		l.mu.Unlock()
		inW.Close()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	endpoint := l.Endpoint
	if endpoint == "" {
		endpoint = "/message?sessionId=" + id
	}
	fmt.Fprintf(w, "event: endpoint\ndata: %s\n\n", endpoint)
	w.(http.Flusher).Flush()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				return
			}
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", line)
			w.(http.Flusher).Flush()
		case <-ctx.Done():
			go func() {
				for range lines { // let the session write what it has
				}
			}()
			return
		}
	}
}

func (l *LegacySSE) message(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	s := l.sessions[r.URL.Query().Get("sessionId")]
	l.mu.Unlock()
	if s == nil {
		http.Error(w, "no such session", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !l.Silent.Load() {
		if _, err := s.in.Write(append(body, '\n')); err != nil {
			http.Error(w, err.Error(), http.StatusGone)
			return
		}
	}
	w.WriteHeader(http.StatusAccepted)
}

// Drop ends every session, as a server restarted would.
func (l *LegacySSE) Drop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, s := range l.sessions {
		s.cancel()
		delete(l.sessions, id)
	}
}

// Open is the number of sessions open.
func (l *LegacySSE) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.sessions)
}
