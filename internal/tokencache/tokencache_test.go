package tokencache

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/internal/jwks"
)

func entry(set *jwks.Set, exp time.Time, name string) *Entry {
	return &Entry{Claims: map[string]any{"sub": name}, Name: name, Exp: exp, Keys: set, Snapshot: set.Snapshot()}
}

func TestGetPut(t *testing.T) {
	set := jwks.Static(jwks.Snapshot{"k": {}})
	now := time.Now()
	c := New(0)
	assert.Nil(t, c.Get("a.b.c", now), "nothing remembered yet")
	c.Put("a.b.c", entry(set, now.Add(time.Minute), "alice"))
	e := c.Get("a.b.c", now)
	require.NotNil(t, e)
	assert.Equal(t, "alice", e.Name)
	assert.Nil(t, c.Get("a.b.d", now), "another token")
	assert.Nil(t, c.Get("a.b.c", now.Add(time.Minute)), "not at its expiry")
	assert.Nil(t, c.Get("a.b.c", now.Add(2*time.Minute)), "not past its expiry")
	assert.NotNil(t, c.Get("a.b.c", now.Add(time.Minute-time.Nanosecond)), "until just before it")
}

func TestNotRemembered(t *testing.T) {
	set := jwks.Static(jwks.Snapshot{"k": {}})
	now := time.Now()
	c := New(0)
	c.Put("no-exp", entry(set, time.Time{}, "a"))
	c.Put("no-keys", &Entry{Name: "b", Exp: now.Add(time.Minute)})
	c.Put("no-snapshot", &Entry{Name: "c", Exp: now.Add(time.Minute), Keys: set})
	c.Put("nil", nil)
	assert.Equal(t, 0, c.Len())
}

// TestKeySetChanged: an entry verified by a snapshot that is no longer the
// set's is not used. A remote set publishes a new snapshot per fetch; a
// second static set stands in for the changed one here.
func TestKeySetChanged(t *testing.T) {
	old := jwks.Static(jwks.Snapshot{"k": {}})
	now := time.Now()
	c := New(0)
	e := entry(old, now.Add(time.Minute), "alice")
	e.Snapshot = jwks.Static(jwks.Snapshot{"k": {}}).Snapshot()
	c.Put("t", e)
	assert.Nil(t, c.Get("t", now))
}

func TestBounded(t *testing.T) {
	set := jwks.Static(jwks.Snapshot{"k": {}})
	now := time.Now()
	c := New(3)
	for i := range 10 {
		c.Put("t"+strconv.Itoa(i), entry(set, now.Add(time.Minute), strconv.Itoa(i)))
		assert.LessOrEqual(t, c.Len(), 3)
	}
	assert.Equal(t, 3, c.Len())
	for i := range 7 {
		assert.Nil(t, c.Get("t"+strconv.Itoa(i), now), "token %d gave way", i)
	}
	for i := 7; i < 10; i++ {
		assert.NotNil(t, c.Get("t"+strconv.Itoa(i), now), "token %d is among the newest", i)
	}
	// Putting a remembered token again replaces its entry, taking no place.
	c.Put("t9", entry(set, now.Add(time.Hour), "nine"))
	assert.Equal(t, 3, c.Len())
	assert.Equal(t, "nine", c.Get("t9", now.Add(30*time.Minute)).Name)
}

func TestOff(t *testing.T) {
	c := New(-1)
	require.Nil(t, c)
	set := jwks.Static(jwks.Snapshot{"k": {}})
	c.Put("t", entry(set, time.Now().Add(time.Minute), "a"))
	assert.Nil(t, c.Get("t", time.Now()))
	assert.Equal(t, 0, c.Len())
}
