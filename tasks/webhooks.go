package tasks

import (
	"context"
	"encoding/json"
	"errors"
)

// Webhook is a task's subscription to its changes: where, and how, a wire
// format tells a client of them (A2A's push notification
// configurations). The store keeps it with the task, for as long as it
// keeps the task.
type Webhook struct {
	// ID names the webhook among its task's.
	ID string
	// Config is the webhook as the wire format encodes it (its URL, its
	// credentials), which the store keeps as given.
	Config json.RawMessage
}

// A WebhookStore is a [Store] that keeps tasks' webhooks with them:
// [Task.Webhooks] holds them, in the order they were first set, and
// [Store.Create] keeps those of the task it creates. It caps the webhooks
// of one owner's tasks, all together, and the cap holds however many
// webhooks are set or tasks created at once: [Store.Create] and
// SetWebhook return ErrTooManyOwnerWebhooks past it. [MemoryStore] and
// the Redis store implement it.
type WebhookStore interface {
	Store
	// SetWebhook sets webhook w of task id, in place of the one with its
	// ID. It returns ErrNotFound for no such task, ErrTooManyWebhooks
	// when the task has max webhooks and none with w's ID,
	// ErrTooManyOwnerWebhooks when the task's owner has as many as the
	// store lets one owner have, and ErrResultTooLarge when w's Config is
	// larger than a result may be.
	SetWebhook(ctx context.Context, id string, w Webhook, max int) error
	// DeleteWebhook removes webhook wid of task id; a webhook that does
	// not exist is no error. It returns ErrNotFound for no such task.
	DeleteWebhook(ctx context.Context, id, wid string) error
}

// ErrTooManyWebhooks: the task has as many webhooks as it may.
var ErrTooManyWebhooks = errors.New("otc/tasks: the task has as many webhooks as it may")

// ErrTooManyOwnerWebhooks: the task's owner has as many webhooks, across
// its tasks, as the store lets one owner have.
var ErrTooManyOwnerWebhooks = errors.New("otc/tasks: the task's owner has as many webhooks as it may")

// webhooksSize is the size of a task's webhooks.
func webhooksSize(ws []Webhook) int {
	n := 0
	for _, w := range ws {
		n += len(w.ID) + len(w.Config)
	}
	return n
}

var _ WebhookStore = (*MemoryStore)(nil)

// SetWebhook implements [WebhookStore].
func (s *MemoryStore) SetWebhook(_ context.Context, id string, w Webhook, max int) error {
	if len(w.Config) > s.maxResult {
		return ErrResultTooLarge
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	mt := s.lookup(id, now)
	if mt == nil {
		return ErrNotFound
	}
	t := &mt.t
	o := s.owners[t.Owner]
	next := cloneWebhooks(t.Webhooks)
	replaced := false
	for i := range next {
		if next[i].ID == w.ID {
			next[i], replaced = Webhook{ID: w.ID, Config: cloneRaw(w.Config)}, true
		}
	}
	if !replaced {
		if len(next) >= max {
			return ErrTooManyWebhooks
		}
		if o.webhooks >= s.webhooksCap {
			return ErrTooManyOwnerWebhooks
		}
		next = append(next, Webhook{ID: w.ID, Config: cloneRaw(w.Config)})
	}
	grow := int64(webhooksSize(next) - webhooksSize(t.Webhooks))
	if grow > 0 && s.bytes+grow > s.maxBytes {
		return ErrStoreFull
	}
	s.bytes += grow
	if !replaced {
		o.webhooks++
	}
	t.Webhooks = next
	return nil
}

// DeleteWebhook implements [WebhookStore].
func (s *MemoryStore) DeleteWebhook(_ context.Context, id, wid string) error {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	mt := s.lookup(id, now)
	if mt == nil {
		return ErrNotFound
	}
	t := &mt.t
	for i, w := range t.Webhooks {
		if w.ID == wid {
			s.bytes -= int64(len(w.ID) + len(w.Config))
			t.Webhooks = append(cloneWebhooks(t.Webhooks[:i]), t.Webhooks[i+1:]...)
			s.owners[t.Owner].webhooks--
			break
		}
	}
	return nil
}

func cloneWebhooks(ws []Webhook) []Webhook {
	if ws == nil {
		return nil
	}
	return append(make([]Webhook, 0, len(ws)+1), ws...)
}

func cloneRaw(b json.RawMessage) json.RawMessage { return append(json.RawMessage(nil), b...) }
