// Package tokencache remembers the claims of bearer tokens whose signature
// has been verified, so that a token sent again and again by the same
// agent costs one verification rather than one per call.
//
// An entry is keyed by the SHA-256 of the token and lives until the
// token's "exp" (never past it, and without the leeway that verification
// allows), and only as long as the key set that verified it is the one in
// use: a refetched set, which may have dropped the key, sends every token
// back to verification once. The cache holds a bounded number of entries;
// when full, the oldest entry gives way. Checks that depend on the call
// (a policy's audience, scopes, revocation, execution binding) are not the
// cache's business: they run on every call, on the cached claims.
package tokencache

import (
	"crypto/sha256"
	"sync"
	"time"
	"unsafe"

	"github.com/otcgo/otc/internal/jwks"
)

// DefaultSize is the number of tokens a cache remembers unless told
// otherwise.
const DefaultSize = 10_000

// Entry is what is remembered of a verified token.
type Entry struct {
	// Claims are the token's claims, shared by every identity built from
	// the entry: they must not be modified.
	Claims map[string]any
	// Name is the identity's name derived from the claims.
	Name string
	// Exp is the token's expiry; the entry is not used at or after it.
	Exp time.Time
	// Keys and Snapshot are the key set that verified the token and the
	// snapshot of it that held the key: the entry is used only while that
	// snapshot is the set's current one.
	Keys     *jwks.Set
	Snapshot *jwks.Snapshot
}

// Cache maps verified tokens to their claims. A nil *Cache remembers
// nothing, so an authenticator whose cache is off calls it all the same.
type Cache struct {
	mu      sync.Mutex
	entries map[[sha256.Size]byte]*Entry
	order   [][sha256.Size]byte // ring of keys, oldest at next once full
	next    int
	size    int
}

// New returns a cache of at most size tokens, or nil when size is
// negative (no cache). Zero means [DefaultSize].
func New(size int) *Cache {
	switch {
	case size < 0:
		return nil
	case size == 0:
		size = DefaultSize
	}
	return &Cache{entries: make(map[[sha256.Size]byte]*Entry), size: size}
}

// sum hashes a token without copying it.
func sum(token string) [sha256.Size]byte {
	return sha256.Sum256(unsafe.Slice(unsafe.StringData(token), len(token)))
}

// Get returns the entry of token when it is remembered and still good at
// now: before its expiry, and verified by the current key set.
func (c *Cache) Get(token string, now time.Time) *Entry {
	if c == nil {
		return nil
	}
	k := sum(token)
	c.mu.Lock()
	e := c.entries[k]
	c.mu.Unlock()
	if e == nil || !now.Before(e.Exp) || e.Keys.Snapshot() != e.Snapshot {
		return nil
	}
	return e
}

// Put remembers e for token. An entry without an expiry, or without the
// key set that verified it, is not remembered.
func (c *Cache) Put(token string, e *Entry) {
	if c == nil || e == nil || e.Exp.IsZero() || e.Keys == nil || e.Snapshot == nil {
		return
	}
	k := sum(token)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[k]; ok {
		c.entries[k] = e
		return
	}
	if len(c.order) < c.size {
		c.order = append(c.order, k)
	} else {
		// The oldest key gives way. Its entry may have been replaced by a
		// newer one for the same token: that too goes, which costs one
		// verification at most.
		delete(c.entries, c.order[c.next])
		c.order[c.next] = k
		c.next = (c.next + 1) % c.size
	}
	c.entries[k] = e
}

// Len returns the number of tokens remembered.
func (c *Cache) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
