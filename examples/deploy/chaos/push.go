package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
)

// A2A push notifications under the chaos: each A2A task names a webhook
// (this process's), and the replicas post each change of the task's state
// to it, signed with one key they share. The report counts the ended
// tasks whose end was posted, and any end posted twice (each change is
// posted once, by the replica that made it).

// pushHook is the webhook: the states posted for each task.
type pushHook struct {
	srv *http.Server
	url string

	mu     sync.Mutex
	states map[string][]string // task id → the states posted, in order
}

// startPushHook serves the webhook on a free loopback port.
func startPushHook() (*pushHook, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &pushHook{url: "http://" + ln.Addr().String() + "/push", states: map[string][]string{}}
	h.srv = &http.Server{Handler: http.HandlerFunc(h.serve)}
	go func() { _ = h.srv.Serve(ln) }()
	return h, nil
}

func (h *pushHook) serve(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var body struct {
		Task struct {
			ID     string `json:"id"`
			Status struct {
				State string `json:"state"`
			} `json:"status"`
		} `json:"task"`
	}
	if json.Unmarshal(b, &body) != nil || body.Task.ID == "" || r.Header.Get("Authorization") == "" {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.states[body.Task.ID] = append(h.states[body.Task.ID], body.Task.Status.State)
	h.mu.Unlock()
}

func (h *pushHook) stop() { _ = h.srv.Close() }

// ends counts, of the tasks given (id → how the load saw it end:
// completed or cancelled), those whose end was posted, and those whose
// end was posted more than once.
func (h *pushHook) ends(ended map[string]string) (posted, twice int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	want := map[string]string{"completed": "TASK_STATE_COMPLETED", "cancelled": "TASK_STATE_CANCELED"}
	for id, how := range ended {
		n := 0
		for _, s := range h.states[id] {
			if s == want[how] {
				n++
			}
		}
		if n > 0 {
			posted++
		}
		if n > 1 {
			twice++
		}
	}
	return posted, twice
}

// writePushKey writes a new P-256 key, PEM PKCS #8, to dir/push.pem, for
// every replica to sign deliveries with.
func writePushKey(dir string) (string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "push.pem")
	return path, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
}
