// Package viewcache keeps what a handler builds from a registry's catalog
// for each set of tools a caller may see: a listing's bytes, or the names
// it holds, under the key of the caller's visibility, for one revision of
// the registry at a time.
//
// It promises three things, which its tests check:
//
//   - a hit takes no lock and allocates nothing: the views of a revision
//     are an immutable map, swapped whole when one is added, so that a
//     listing served from the cache costs what a listing of a single
//     cached catalog did;
//   - it is bounded: at most Size views per cache; adding one more drops
//     the one least recently used (recency counted in misses, so that a
//     hit writes to memory only when a miss happened since the view's
//     last use);
//   - a view is never served for another revision: a newer revision
//     drops every view of the older one, and a request that read an older
//     revision than the cache holds gets a view built for it and not kept.
//
// A miss builds its view while holding the cache's lock, so that the
// requests that miss together build it once.
package viewcache

import (
	"sync"
	"sync/atomic"
)

// DefaultSize is the number of views a [Cache] keeps when its Size is
// zero or less: more distinct sets of visible tools than most servers'
// callers have between them (each distinct set of scopes, capabilities
// and audiences, for each protocol), and few enough that the memory of a
// large catalog's listings stays modest.
const DefaultSize = 64

// Cache holds views of type V by revision and key. The zero value is
// ready to use; it must not be copied after first use.
type Cache[V any] struct {
	// Size caps the views kept. Zero or less means DefaultSize.
	Size int

	mu  sync.Mutex // serializes misses
	gen atomic.Pointer[generation[V]]
}

// generation is the views of one revision. It is never changed once
// published, except for the recency of its views.
type generation[V any] struct {
	revision uint64
	views    map[string]*view[V]
	clock    uint64 // the misses of this revision so far, this one's included
}

type view[V any] struct {
	value V
	used  atomic.Uint64 // the clock of the generation that last served it
}

// Get returns the view of key at revision, calling build to make it when
// the cache does not hold it.
func (c *Cache[V]) Get(revision uint64, key string, build func() V) V {
	if g := c.gen.Load(); g != nil && g.revision == revision {
		if v := g.views[key]; v != nil {
			// Written only when a miss happened since the view's last
			// use, and never moved back by a reader of an older
			// generation.
			for u := v.used.Load(); u < g.clock && !v.used.CompareAndSwap(u, g.clock); u = v.used.Load() {
			}
			return v.value
		}
	}
	return c.miss(revision, key, build)
}

// miss builds and keeps the view of key at revision.
func (c *Cache[V]) miss(revision uint64, key string, build func() V) V {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.gen.Load()
	if g != nil && g.revision == revision {
		if v := g.views[key]; v != nil {
			return v.value
		}
	}
	if g != nil && g.revision > revision {
		return build() // a request that read an older revision: served, not kept
	}
	value := build()
	size := c.Size
	if size <= 0 {
		size = DefaultSize
	}
	next := &generation[V]{revision: revision, clock: 1}
	if g != nil && g.revision == revision {
		next.clock = g.clock + 1
		next.views = make(map[string]*view[V], min(len(g.views)+1, size))
		for k, v := range g.views {
			next.views[k] = v
		}
		for len(next.views) >= size {
			delete(next.views, lru(next.views))
		}
	} else {
		next.views = make(map[string]*view[V], 1)
	}
	v := &view[V]{value: value}
	v.used.Store(next.clock)
	next.views[key] = v
	c.gen.Store(next)
	return value
}

// lru returns the key of the least recently used view.
func lru[V any](views map[string]*view[V]) string {
	var key string
	first := true
	var use uint64
	for k, v := range views {
		if u := v.used.Load(); first || u < use {
			key, use, first = k, u, false
		}
	}
	return key
}

// Len returns the number of views held, for tests and metrics.
func (c *Cache[V]) Len() int {
	if g := c.gen.Load(); g != nil {
		return len(g.views)
	}
	return 0
}
