package sessions

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// DefaultLogSize is how many messages a store's log keeps by default:
// a client that reconnects after more were published is told that it
// may have missed some.
const DefaultLogSize = 10000

// MemoryOptions configure a MemoryStore.
type MemoryOptions struct {
	// LogSize bounds the messages the log keeps (DefaultLogSize when
	// zero).
	LogSize int
	// Now is the store's clock (time.Now when nil).
	Now func() time.Time
}

// MemoryStore is a Store in one process: for one server, or for the
// replicas of a test. Its zero value is not usable: call NewMemoryStore.
type MemoryStore struct {
	now  func() time.Time
	size int

	mu       sync.Mutex
	sessions map[string]*memorySession
	owners   map[string]int
	log      []Message // a ring of size entries; first is the oldest
	first    int       // index of the oldest entry in log
	seq      uint64    // the sequence number of the newest entry
	wake     chan struct{}
}

type memorySession struct {
	owner   string
	expires time.Time
	uris    map[string]struct{}
}

var _ Store = (*MemoryStore)(nil)

// NewMemoryStore returns a store in memory. opts may be nil.
func NewMemoryStore(opts *MemoryOptions) *MemoryStore {
	if opts == nil {
		opts = &MemoryOptions{}
	}
	m := &MemoryStore{now: opts.Now, size: opts.LogSize, sessions: map[string]*memorySession{}, owners: map[string]int{}, wake: make(chan struct{})}
	if m.now == nil {
		m.now = time.Now
	}
	if m.size <= 0 {
		m.size = DefaultLogSize
	}
	return m
}

// live returns the session id when alive, forgetting it when it expired;
// m.mu held.
func (m *MemoryStore) live(id string, now time.Time) *memorySession {
	s := m.sessions[id]
	if s != nil && !now.Before(s.expires) {
		m.forget(id, s)
		return nil
	}
	return s
}

func (m *MemoryStore) forget(id string, s *memorySession) {
	delete(m.sessions, id)
	if m.owners[s.owner]--; m.owners[s.owner] <= 0 {
		delete(m.owners, s.owner)
	}
}

// sweep forgets the expired sessions; m.mu held.
func (m *MemoryStore) sweep(now time.Time) {
	for id, s := range m.sessions {
		if !now.Before(s.expires) {
			m.forget(id, s)
		}
	}
}

// Open implements Store.
func (m *MemoryStore) Open(_ context.Context, s Session, idle time.Duration, lim Limits) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	full := func() bool {
		return lim.Total > 0 && len(m.sessions) >= lim.Total || lim.PerOwner > 0 && m.owners[s.Owner] >= lim.PerOwner
	}
	if full() {
		m.sweep(now)
	}
	switch {
	case lim.Total > 0 && len(m.sessions) >= lim.Total:
		return fmt.Errorf("%w: %d sessions are open, the most this server keeps", ErrLimit, lim.Total)
	case lim.PerOwner > 0 && m.owners[s.Owner] >= lim.PerOwner:
		return fmt.Errorf("%w: this caller has %d sessions open, the most one caller may", ErrLimit, lim.PerOwner)
	}
	if old := m.sessions[s.ID]; old != nil {
		m.forget(s.ID, old)
	}
	m.sessions[s.ID] = &memorySession{owner: s.Owner, expires: now.Add(idle), uris: map[string]struct{}{}}
	m.owners[s.Owner]++
	return nil
}

// Touch implements Store.
func (m *MemoryStore) Touch(_ context.Context, s Session, idle time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	ms := m.live(s.ID, now)
	if ms == nil {
		return ErrNotFound
	}
	ms.expires = now.Add(idle)
	return nil
}

// End implements Store.
func (m *MemoryStore) End(_ context.Context, s Session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ms := m.sessions[s.ID]; ms != nil {
		m.forget(s.ID, ms)
	}
	return nil
}

// Subscribe implements Store.
func (m *MemoryStore) Subscribe(_ context.Context, s Session, uri string, max int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms := m.live(s.ID, m.now())
	if ms == nil {
		return ErrNotFound
	}
	if _, ok := ms.uris[uri]; !ok && max > 0 && len(ms.uris) >= max {
		return fmt.Errorf("%w: the session is subscribed to %d resources, the most it may", ErrLimit, max)
	}
	ms.uris[uri] = struct{}{}
	return nil
}

// Unsubscribe implements Store.
func (m *MemoryStore) Unsubscribe(_ context.Context, s Session, uri string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ms := m.live(s.ID, m.now()); ms != nil {
		delete(ms.uris, uri)
	}
	return nil
}

// Subscriptions implements Store.
func (m *MemoryStore) Subscriptions(_ context.Context, s Session) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms := m.live(s.ID, m.now())
	if ms == nil {
		return nil, ErrNotFound
	}
	out := make([]string, 0, len(ms.uris))
	for u := range ms.uris {
		out = append(out, u)
	}
	return out, nil
}

// Publish implements Store.
func (m *MemoryStore) Publish(_ context.Context, data []byte) error {
	m.mu.Lock()
	m.seq++
	msg := Message{ID: strconv.FormatUint(m.seq, 10), Data: append([]byte(nil), data...)}
	if len(m.log) < m.size {
		m.log = append(m.log, msg)
	} else {
		m.log[m.first] = msg
		m.first = (m.first + 1) % m.size
	}
	wake := m.wake
	m.wake = make(chan struct{})
	m.mu.Unlock()
	close(wake)
	return nil
}

// after returns the messages after sequence number seq, whether the log
// holds all of them, and the channel closed at the next publication;
// m.mu held.
func (m *MemoryStore) after(seq uint64) ([]Message, bool, chan struct{}) {
	n := len(m.log)
	oldest := m.seq - uint64(n) + 1 // the sequence number of log[first]
	if seq > m.seq {
		return nil, false, m.wake
	}
	complete := seq+1 >= oldest
	if seq+1 < oldest {
		seq = oldest - 1
	}
	count := int(m.seq - seq)
	out := make([]Message, 0, count)
	for i := n - count; i < n; i++ {
		out = append(out, m.log[(m.first+i)%n])
	}
	return out, complete, m.wake
}

// parseID reads a message ID of this store.
func parseID(id string) (uint64, bool) {
	n, err := strconv.ParseUint(id, 10, 64)
	return n, err == nil
}

// Follow implements Store.
func (m *MemoryStore) Follow(ctx context.Context, after string, f func(Message)) error {
	m.mu.Lock()
	seq := m.seq
	if after != "" {
		if n, ok := parseID(after); ok && n <= m.seq {
			seq = n
		}
	}
	m.mu.Unlock()
	for {
		m.mu.Lock()
		msgs, _, wake := m.after(seq)
		m.mu.Unlock()
		for _, msg := range msgs {
			f(msg)
		}
		if len(msgs) > 0 {
			seq, _ = parseID(msgs[len(msgs)-1].ID)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		}
	}
}

// Since implements Store.
func (m *MemoryStore) Since(_ context.Context, after string) ([]Message, bool, error) {
	n, ok := parseID(after)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !ok || n > m.seq {
		return nil, false, nil // not an ID of this log: the caller starts afresh
	}
	msgs, complete, _ := m.after(n)
	return msgs, complete, nil
}

// Head implements Store.
func (m *MemoryStore) Head(context.Context) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return strconv.FormatUint(m.seq, 10), nil
}
