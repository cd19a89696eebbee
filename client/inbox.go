package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/otcgo/otc/internal/jsonrpc"
)

// inbox routes what a server sends on a channel of its own, where the
// answers come apart from their requests (a stdio pipe, an HTTP+SSE
// event stream): an answer to the request waiting for it; a request of
// the server's answered (a ping as it is read; others each on a
// goroutine of its own, as a handler may wait on its user, at most
// maxServerRequests at once); a notification handed on. A server that
// floods the client with requests costs it a bounded number of
// goroutines.
type inbox struct {
	mu      sync.Mutex
	pending map[int64]chan []byte
	done    chan struct{} // closed by end
	err     error         // why it ended

	// answering holds a token for each request of the server's being
	// answered on a goroutine of its own.
	answering chan struct{}
}

// maxServerRequests bounds the requests of a server's (questions for the
// user or a model, which may take long) that one connection answers at
// once; past it, a request is refused at once with an error. A ping is
// answered as it is read.
const maxServerRequests = 16

func newInbox() *inbox {
	return &inbox{pending: map[int64]chan []byte{}, done: make(chan struct{}), answering: make(chan struct{}, maxServerRequests)}
}

// deliver routes one message of the server's; ctx is the reading's, which
// the answers to the server's requests are sent with. A message that is
// not JSON-RPC is skipped (a server's stray output).
func (in *inbox) deliver(ctx context.Context, s *mcpSession, msg []byte) {
	m, ok := jsonrpc.ReadEnvelope(msg)
	if !ok || m.BadMethod {
		return
	}
	switch {
	case m.Method == "":
		id, err := strconv.ParseInt(string(bytes.Trim(m.ID, `"`)), 10, 64)
		if err != nil {
			return
		}
		in.mu.Lock()
		ch := in.pending[id]
		delete(in.pending, id)
		in.mu.Unlock()
		if ch != nil {
			ch <- msg
		}
	case len(m.ID) > 0 && string(m.ID) != "null":
		if m.Method == "ping" {
			s.incoming(ctx, nil, msg)
			return
		}
		select {
		case in.answering <- struct{}{}:
			go func() {
				defer func() { <-in.answering }()
				s.incoming(ctx, nil, msg)
			}()
		default:
			s.refuse(ctx, m.ID, fmt.Sprintf("the client is answering %d requests of the server's already; try again when one is answered", maxServerRequests))
		}
	default:
		s.notification(m.Method, notificationParams(msg))
	}
}

// expect makes a place for the answer to request id; await or forget
// takes it back.
func (in *inbox) expect(id int64) chan []byte {
	ch := make(chan []byte, 1)
	in.mu.Lock()
	in.pending[id] = ch
	in.mu.Unlock()
	return ch
}

func (in *inbox) forget(id int64) {
	in.mu.Lock()
	delete(in.pending, id)
	in.mu.Unlock()
}

// await waits for the answer to request id, until ctx ends or the
// channel does.
func (in *inbox) await(ctx context.Context, id int64, ch chan []byte) ([]byte, error) {
	select {
	case msg := <-ch:
		return msg, nil
	case <-ctx.Done():
		in.forget(id)
		return nil, context.Cause(ctx)
	case <-in.done:
		in.forget(id)
		select {
		case msg := <-ch: // answered just before the end
			return msg, nil
		default:
		}
		return nil, in.ended()
	}
}

// end says the channel ended, and why; only its first call counts.
func (in *inbox) end(err error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	select {
	case <-in.done:
		return
	default:
	}
	in.err = err
	close(in.done)
}

// ended returns why the channel ended (nil while it has not).
func (in *inbox) ended() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.err
}

// notificationParams is a notification's params.
func notificationParams(msg []byte) json.RawMessage {
	var n struct {
		Params json.RawMessage `json:"params"`
	}
	_ = json.Unmarshal(msg, &n)
	return n.Params
}
