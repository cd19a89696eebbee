package mcp

import (
	"sync"

	"github.com/otcgo/otc/internal/jsonrpc"
	"github.com/otcgo/otc/internal/primitive"
	"github.com/otcgo/otc/internal/wire"
)

// subscriptions are the resources one stdio connection subscribed to,
// and what it is to be told: the changes of the registry's resources and
// prompts reach the connection through a goroutine of its own, coalesced
// while it writes, so that a change never waits on a slow client.
type subscriptions struct {
	mu      sync.Mutex
	uris    map[string]struct{}
	lists   primitive.Change // list changes not yet sent
	updated map[string]struct{}
	wake    chan struct{}
}

func newSubscriptions() *subscriptions {
	return &subscriptions{uris: map[string]struct{}{}, updated: map[string]struct{}{}, wake: make(chan struct{}, 1)}
}

// add subscribes to uri; false when the connection holds the most it may.
func (s *subscriptions) add(uri string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.uris[uri]; !ok && len(s.uris) >= maxSubscriptions {
		return false
	}
	s.uris[uri] = struct{}{}
	return true
}

func (s *subscriptions) remove(uri string) {
	s.mu.Lock()
	delete(s.uris, uri)
	delete(s.updated, uri)
	s.mu.Unlock()
}

// note records change c for the connection, and wakes its sender.
func (s *subscriptions) note(c primitive.Change) {
	s.mu.Lock()
	s.lists.Resources = s.lists.Resources || c.Resources
	s.lists.Prompts = s.lists.Prompts || c.Prompts
	switch {
	case c.Updated != "":
		if _, ok := s.uris[c.Updated]; ok {
			s.updated[c.Updated] = struct{}{}
		}
	case c.Template != nil:
		for uri := range s.uris {
			if _, ok := c.Template.Template.Match(uri); ok {
				s.updated[uri] = struct{}{}
			}
		}
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// take returns the notifications due, and forgets them.
func (s *subscriptions) take() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out [][]byte
	if s.lists.Resources {
		out = append(out, notification("notifications/resources/list_changed", []byte("{}")))
	}
	if s.lists.Prompts {
		out = append(out, notification("notifications/prompts/list_changed", []byte("{}")))
	}
	for uri := range s.updated {
		params := wire.AppendString([]byte(`{"uri":`), uri)
		out = append(out, notification("notifications/resources/updated", append(params, '}')))
	}
	s.lists = primitive.Change{}
	clear(s.updated)
	return out
}

// notification is a notification of method with params.
func notification(method string, params []byte) []byte {
	return append(append(jsonrpc.AppendNotificationHead(nil, method), params...), '}')
}
