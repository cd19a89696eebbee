// Package storetest checks that a sessions.Store keeps the contract the
// mcp package relies on. A store's tests call Run with a function that
// makes a fresh, empty store whose log keeps logSize messages.
package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/sessions"
)

// Run runs the contract's tests against the stores newStore makes.
func Run(t *testing.T, newStore func(t *testing.T, logSize int) sessions.Store) {
	ctx := context.Background()
	a := sessions.Session{ID: "a", Owner: "alice"}
	b := sessions.Session{ID: "b", Owner: "alice"}
	c := sessions.Session{ID: "c", Owner: "bob"}

	t.Run("OpenTouchEnd", func(t *testing.T) {
		s := newStore(t, 100)
		assert.ErrorIs(t, s.Touch(ctx, a, time.Minute), sessions.ErrNotFound, "never opened")
		require.NoError(t, s.Open(ctx, a, time.Minute, sessions.Limits{}))
		require.NoError(t, s.Touch(ctx, a, time.Minute))
		require.NoError(t, s.End(ctx, a))
		assert.ErrorIs(t, s.Touch(ctx, a, time.Minute), sessions.ErrNotFound, "ended")
		require.NoError(t, s.End(ctx, a), "ending twice is no error")
		_, err := s.Subscriptions(ctx, a)
		assert.ErrorIs(t, err, sessions.ErrNotFound)
		assert.ErrorIs(t, s.Subscribe(ctx, a, "x://1", 10), sessions.ErrNotFound)
	})

	t.Run("IdleExpiry", func(t *testing.T) {
		s := newStore(t, 100)
		idle := time.Second // room for a slow machine between two touches
		require.NoError(t, s.Open(ctx, a, idle, sessions.Limits{}))
		require.NoError(t, s.Open(ctx, b, idle, sessions.Limits{}))
		for range 4 { // touched, a outlives its first idle period
			time.Sleep(idle / 3)
			require.NoError(t, s.Touch(ctx, a, idle))
		}
		assert.ErrorIs(t, s.Touch(ctx, b, idle), sessions.ErrNotFound, "b was not touched")
		time.Sleep(2 * idle)
		assert.ErrorIs(t, s.Touch(ctx, a, idle), sessions.ErrNotFound, "a idle since")
		// An expired session counts no more against the bounds.
		require.NoError(t, s.Open(ctx, c, time.Minute, sessions.Limits{Total: 1}))
	})

	t.Run("Limits", func(t *testing.T) {
		s := newStore(t, 100)
		lim := sessions.Limits{Total: 3, PerOwner: 2}
		require.NoError(t, s.Open(ctx, a, time.Minute, lim))
		require.NoError(t, s.Open(ctx, b, time.Minute, lim))
		err := s.Open(ctx, sessions.Session{ID: "a2", Owner: "alice"}, time.Minute, lim)
		assert.ErrorIs(t, err, sessions.ErrLimit, "alice's third")
		require.NoError(t, s.Open(ctx, c, time.Minute, lim), "bob's first")
		err = s.Open(ctx, sessions.Session{ID: "d", Owner: "carol"}, time.Minute, lim)
		assert.ErrorIs(t, err, sessions.ErrLimit, "the fourth in all")
		require.NoError(t, s.End(ctx, a))
		require.NoError(t, s.Open(ctx, sessions.Session{ID: "a3", Owner: "alice"}, time.Minute, lim), "an ended session frees its place")
	})

	t.Run("Subscriptions", func(t *testing.T) {
		s := newStore(t, 100)
		require.NoError(t, s.Open(ctx, a, time.Minute, sessions.Limits{}))
		require.NoError(t, s.Open(ctx, c, time.Minute, sessions.Limits{}))
		require.NoError(t, s.Subscribe(ctx, a, "x://1", 2))
		require.NoError(t, s.Subscribe(ctx, a, "x://2", 2))
		require.NoError(t, s.Subscribe(ctx, a, "x://2", 2), "again: no new place")
		assert.ErrorIs(t, s.Subscribe(ctx, a, "x://3", 2), sessions.ErrLimit)
		require.NoError(t, s.Subscribe(ctx, c, "x://3", 2), "c's subscriptions are its own")
		got, err := s.Subscriptions(ctx, a)
		require.NoError(t, err)
		slices.Sort(got)
		assert.Equal(t, []string{"x://1", "x://2"}, got)
		require.NoError(t, s.Unsubscribe(ctx, a, "x://1"))
		require.NoError(t, s.Subscribe(ctx, a, "x://3", 2))
		got, _ = s.Subscriptions(ctx, a)
		slices.Sort(got)
		assert.Equal(t, []string{"x://2", "x://3"}, got)
		require.NoError(t, s.End(ctx, a))
		require.NoError(t, s.Open(ctx, a, time.Minute, sessions.Limits{}))
		got, _ = s.Subscriptions(ctx, a)
		assert.Empty(t, got, "a session opened again under an ended one's id starts with none")
	})

	t.Run("FollowAndSince", func(t *testing.T) {
		s := newStore(t, 100)
		fctx, cancel := context.WithCancel(ctx)
		var mu sync.Mutex
		var got []sessions.Message
		done := make(chan error, 1)
		started := make(chan struct{})
		go func() {
			close(started)
			done <- s.Follow(fctx, "", func(m sessions.Message) {
				mu.Lock()
				got = append(got, m)
				mu.Unlock()
			})
		}()
		<-started
		// Follow reads from the moment it is called: publish until the
		// follower has seen one, then a numbered run it must see whole.
		require.Eventually(t, func() bool {
			require.NoError(t, s.Publish(ctx, []byte("warm")))
			mu.Lock()
			defer mu.Unlock()
			return len(got) > 0
		}, 5*time.Second, 20*time.Millisecond)
		for i := range 5 {
			require.NoError(t, s.Publish(ctx, fmt.Appendf(nil, "m%d", i)))
		}
		require.Eventually(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(got) > 0 && string(got[len(got)-1].Data) == "m4"
		}, 5*time.Second, 10*time.Millisecond)
		cancel()
		require.NoError(t, <-done, "a follow whose context ends returns nil")
		mu.Lock()
		var tail []string
		mark := ""
		for i, m := range got {
			if len(m.Data) == 2 {
				tail = append(tail, string(m.Data))
			}
			if string(m.Data) == "m0" && i > 0 {
				mark = got[i-1].ID // the last message before the run
			}
		}
		mu.Unlock()
		assert.Equal(t, []string{"m0", "m1", "m2", "m3", "m4"}, tail, "in order, none twice")

		msgs, complete, err := s.Since(ctx, mark)
		require.NoError(t, err)
		assert.True(t, complete)
		var data []string
		for _, m := range msgs {
			data = append(data, string(m.Data))
		}
		assert.Equal(t, []string{"m0", "m1", "m2", "m3", "m4"}, data, "what was published after mark")
		assert.NotEqual(t, msgs[0].ID, msgs[1].ID)

		// Head is the newest message: following from it reads what is
		// published after.
		head, err := s.Head(ctx)
		require.NoError(t, err)
		assert.Equal(t, msgs[len(msgs)-1].ID, head)

		// Following from an ID reads what came after it.
		fctx, cancel = context.WithCancel(ctx)
		defer cancel()
		from := make(chan string, 10)
		go func() {
			_ = s.Follow(fctx, msgs[2].ID, func(m sessions.Message) { from <- string(m.Data) })
		}()
		assert.Equal(t, "m3", <-from)
		assert.Equal(t, "m4", <-from)

		_, complete, err = s.Since(ctx, "no-such-id")
		require.NoError(t, err)
		assert.False(t, complete, "an ID the log never gave")
	})

	t.Run("Window", func(t *testing.T) {
		s := newStore(t, 10)
		first := lastID(t, s)
		for i := range 100 {
			require.NoError(t, s.Publish(ctx, fmt.Appendf(nil, "n%d", i)))
		}
		msgs, complete, err := s.Since(ctx, first)
		require.NoError(t, err)
		assert.False(t, complete, "the window lost messages after first")
		assert.LessOrEqual(t, len(msgs), 100)
		if assert.NotEmpty(t, msgs) {
			assert.Equal(t, "n99", string(msgs[len(msgs)-1].Data), "the newest is kept")
		}
	})
}

// lastID publishes nothing and returns the ID of the newest message, read
// by following from before it.
func lastID(t *testing.T, s sessions.Store) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ids := make(chan string, 1)
	go func() {
		_ = s.Follow(ctx, "", func(m sessions.Message) {
			select {
			case ids <- m.ID:
			default:
			}
		})
	}()
	// A marker published while following gives the newest ID.
	time.Sleep(50 * time.Millisecond)
	require.NoError(t, s.Publish(context.Background(), []byte("mark")))
	select {
	case id := <-ids:
		return id
	case <-ctx.Done():
		t.Fatal("the follower saw nothing")
		return ""
	}
}
