package viewcache

import (
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// counting returns a build function for key's view, and the number of
// times it ran.
func counting(value string) (func() string, *int) {
	n := new(int)
	return func() string { *n++; return value }, n
}

func TestHitsBuildOnce(t *testing.T) {
	t.Parallel()
	var c Cache[string]
	build, n := counting("a view")
	for range 3 {
		assert.Equal(t, "a view", c.Get(1, "k", build))
	}
	assert.Equal(t, 1, *n)
	assert.Equal(t, 1, c.Len())
}

func TestHitAllocatesNothing(t *testing.T) {
	var c Cache[[]byte]
	c.Get(1, "k", func() []byte { return []byte("listing") })
	allocs := testing.AllocsPerRun(100, func() {
		c.Get(1, "k", func() []byte { panic("a hit must not build") })
	})
	assert.Zero(t, allocs)
}

func TestBoundedLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	c := Cache[string]{Size: 3}
	for _, k := range []string{"a", "b", "c"} {
		c.Get(1, k, func() string { return k })
	}
	c.Get(1, "a", func() string { panic("held") }) // a used again: b is now the oldest
	c.Get(1, "d", func() string { return "d" })
	assert.Equal(t, 3, c.Len())
	rebuilt := map[string]bool{}
	for _, k := range []string{"a", "c", "d"} {
		c.Get(1, k, func() string { rebuilt[k] = true; return k })
	}
	assert.Empty(t, rebuilt, "a, c and d are held")
	build, n := counting("b")
	c.Get(1, "b", build)
	assert.Equal(t, 1, *n, "b was dropped")
	assert.Equal(t, 3, c.Len())
}

func TestDefaultSize(t *testing.T) {
	t.Parallel()
	var c Cache[int]
	for i := range DefaultSize + 10 {
		c.Get(1, strconv.Itoa(i), func() int { return i })
	}
	assert.Equal(t, DefaultSize, c.Len())
}

func TestRevisions(t *testing.T) {
	t.Parallel()
	var c Cache[string]
	c.Get(1, "k", func() string { return "one" })
	c.Get(1, "j", func() string { return "one" })
	assert.Equal(t, "two", c.Get(2, "k", func() string { return "two" }), "a newer revision is built anew")
	assert.Equal(t, 1, c.Len(), "and drops the older one's views")
	build, n := counting("old")
	assert.Equal(t, "old", c.Get(1, "k", build), "an older revision is served its own view")
	assert.Equal(t, "two", c.Get(2, "k", func() string { panic("held") }), "and not kept")
	assert.Equal(t, 1, *n)
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	c := Cache[string]{Size: 4}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				rev := uint64(i / 100)
				k := strconv.Itoa((g + i) % 6)
				want := strconv.FormatUint(rev, 10) + "/" + k
				assert.Equal(t, want, c.Get(rev, k, func() string { return want }))
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, c.Len(), 4)
}
