package a2a_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/a2a"
)

// What one caller of push notifications can make the agent spend: a
// webhook's answer costs a bounded amount of memory, and slow webhooks of
// a few callers, or at one host, cannot take the others' place.

// headerBomb is a webhook that answers every post with headers of about
// size bytes, written from one buffer (so that the test's own allocations
// do not count).
func headerBomb(t *testing.T, size int) (url string, posts *atomic.Int32) {
	t.Helper()
	var b strings.Builder
	b.WriteString("HTTP/1.1 200 OK\r\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "X-Pad-%d: %s\r\n", i, strings.Repeat("a", 1000))
	}
	b.WriteString("Content-Length: 0\r\n\r\n")
	answer := []byte(b.String())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	posts = &atomic.Int32{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(r)
					if err != nil {
						return
					}
					_, _ = io.Copy(io.Discard, req.Body)
					posts.Add(1)
					if _, err := c.Write(answer); err != nil {
						return
					}
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/hook", posts
}

// tarpit is a webhook that takes each post and never answers, until the
// test ends. It listens on host (a loopback address), and counts the
// posts under way at once.
type tarpit struct {
	url               string
	mu                sync.Mutex
	now, most, posted int
}

func newTarpit(t *testing.T, host string) *tarpit {
	t.Helper()
	tp := &tarpit{}
	stop := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		tp.mu.Lock()
		tp.now++
		tp.posted++
		tp.most = max(tp.most, tp.now)
		tp.mu.Unlock()
		select {
		case <-stop:
		case <-r.Context().Done():
		}
		tp.mu.Lock()
		tp.now--
		tp.mu.Unlock()
	}))
	ln, err := net.Listen("tcp", host+":0")
	require.NoError(t, err)
	srv.Listener = ln
	srv.Start()
	t.Cleanup(func() { close(stop); srv.Close() })
	tp.url = srv.URL + "/hook"
	return tp
}

// counts are the posts the tarpit has taken, and the most under way at
// once.
func (tp *tarpit) counts() (posted, most int) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return tp.posted, tp.most
}

// configure gives task of sub n webhooks at url, each of its own id.
func configure(t *testing.T, s *server, sub, task, url string, n int) {
	t.Helper()
	for i := range n {
		r := s.rpcAs(t, sub, "CreateTaskPushNotificationConfig", fmt.Sprintf(`{"taskId":%q,"id":"c%d","url":%q}`, task, i, url))
		require.Nil(t, r.Error, "%v", r.Error)
	}
}

// cancelTask cancels task of sub: a change of state, delivered to each
// of its webhooks.
func cancelTask(t *testing.T, s *server, sub, task string) {
	t.Helper()
	r := s.rpcAs(t, sub, "CancelTask", fmt.Sprintf(`{"id":%q}`, task))
	require.Nil(t, r.Error, "%v", r.Error)
}

// TestPushAnswerBounded: a webhook that answers megabytes of headers
// costs each delivery a few kilobytes, not the headers' size: 80
// deliveries to one whose answers carry 9 MB of headers each allocate
// less than 32 MB in all (unbounded, they allocate over 700 MB).
func TestPushAnswerBounded(t *testing.T) {
	url, posts := headerBomb(t, 9<<20)
	s, _, _, logs := pushServer(t, &a2a.PushOptions{AllowedNetworks: loopback, Attempts: 1})
	var ids []string
	for i := range 8 {
		id := s.startSlow(t, "alice", fmt.Sprintf("m%d", i))
		configure(t, s, "alice", id, url, 10)
		ids = append(ids, id)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, id := range ids {
		cancelTask(t, s, "alice", id)
	}
	require.Eventually(t, func() bool { return strings.Count(logs.String(), "could not be delivered") == 80 }, 60*time.Second, 10*time.Millisecond,
		"each delivery fails on the answer's headers: %s", logs)
	runtime.ReadMemStats(&after)
	assert.EqualValues(t, 80, posts.Load())
	assert.Contains(t, logs.String(), "exceeded 16384 bytes")
	allocated := after.TotalAlloc - before.TotalAlloc
	assert.Less(t, allocated, uint64(32<<20), "allocated %d MB for 80 answers of 9 MB of headers", allocated>>20)
	t.Logf("80 deliveries answered with 9 MB of headers each allocated %.1f MB", float64(allocated)/(1<<20))
}

// TestPushFairShare: callers whose webhooks never answer hold their share
// of the pending deliveries and of the posts under way, not the others':
// ten callers with five webhooks each at one tarpit, or one caller with
// webhooks at many tarpits, and another caller's notification still
// arrives. A dropped notification is logged with its task and
// configuration, not its webhook's URL.
func TestPushFairShare(t *testing.T) {
	t.Run("many_callers_one_host", func(t *testing.T) {
		tp := newTarpit(t, "127.0.0.3") // another host than the good webhook's
		s, _, _, logs := pushServer(t, &a2a.PushOptions{AllowedNetworks: loopback, MaxPending: 20, MaxInFlight: 16, Attempts: 1})
		for i := range 10 {
			sub := fmt.Sprintf("mallory%d", i)
			id := s.startSlow(t, sub, "m-"+sub)
			configure(t, s, sub, id, tp.url, 5)
			cancelTask(t, s, sub, id)
		}
		require.Eventually(t, func() bool { p, _ := tp.counts(); return p == 2 }, 10*time.Second, 10*time.Millisecond, "the host's share: a tenth of 20")
		assert.Contains(t, logs.String(), "the webhook's host has its share")

		good := newHook(t)
		id := s.startSlow(t, "alice", "a1")
		configure(t, s, "alice", id, good.srv.URL, 1)
		cancelTask(t, s, "alice", id)
		good.waitFor(t, "TASK_STATE_CANCELED")
		posted, most := tp.counts()
		assert.Equal(t, 2, posted, "no more taken from the tarpit's callers meanwhile")
		assert.LessOrEqual(t, most, 2, "an eighth of 16 posts under way at one host")
	})
	t.Run("one_caller_many_hosts", func(t *testing.T) {
		s, _, _, logs := pushServer(t, &a2a.PushOptions{AllowedNetworks: loopback, MaxPending: 10, Attempts: 1})
		var pits []*tarpit
		for i := range 12 {
			pits = append(pits, newTarpit(t, fmt.Sprintf("127.0.0.%d", 10+i)))
		}
		for i, tp := range pits {
			id := s.startSlow(t, "mallory", fmt.Sprintf("m%d", i))
			configure(t, s, "mallory", id, tp.url, 1)
			cancelTask(t, s, "mallory", id)
		}
		require.Eventually(t, func() bool { return strings.Contains(logs.String(), "the task's caller has its share") }, 10*time.Second, 10*time.Millisecond)
		good := newHook(t)
		id := s.startSlow(t, "alice", "a1")
		configure(t, s, "alice", id, good.srv.URL, 1)
		cancelTask(t, s, "alice", id)
		good.waitFor(t, "TASK_STATE_CANCELED")
		taken := func() int {
			n := 0
			for _, tp := range pits {
				p, _ := tp.counts()
				n += p
			}
			return n
		}
		// The post taken may still be on its way to its tarpit on a busy
		// machine: it is counted once it arrives.
		require.Eventually(t, func() bool { return taken() >= 1 }, 10*time.Second, 10*time.Millisecond)
		assert.Equal(t, 1, taken(), "the caller's share: a tenth of 10")
	})
	t.Run("dropped_without_the_url", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		closed := "http://" + ln.Addr().String() + "/secret-path?token=hush"
		ln.Close() // nothing listens: the post fails to connect
		s, _, _, logs := pushServer(t, &a2a.PushOptions{AllowedNetworks: loopback, Attempts: 1})
		id := s.startSlow(t, "alice", "d1")
		configure(t, s, "alice", id, closed, 1)
		cancelTask(t, s, "alice", id)
		require.Eventually(t, func() bool { return strings.Contains(logs.String(), "could not be delivered") }, 10*time.Second, 10*time.Millisecond)
		assert.Contains(t, logs.String(), "connection refused")
		assert.Contains(t, logs.String(), "config=c0")
		assert.NotContains(t, logs.String(), "secret-path")
		assert.NotContains(t, logs.String(), "hush")
	})
}
