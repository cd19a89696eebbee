package otc

import (
	"encoding/binary"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// Visibility is what one caller may see of a registry's catalog through
// one protocol: the tools it could call, as far as that can be told
// without a call. Get one from [Registry.Visibility]; the handlers of
// every wire format list only the tools it sees (GET /tools, the REST
// planner view, MCP tools/list, the registry view's listing).
//
// A tool is visible when its [Policy] lets the protocol call it and the
// caller's identity passes the checks of the policy that depend on the
// caller alone: the kind of token (a capability token, or any token for
// RequiredScopes), the audience, the scopes, the capabilities and the
// blast radius. The checks that depend on the exact call (revocation,
// execution binding, a token spent already) never hide a tool, and a
// call is checked in full whatever the catalog showed: visibility spares
// a model the tools it cannot call; it is not what keeps it from calling
// them.
//
// A Visibility is a small value, cheap to make for each request: making
// one reads each of the caller's claims once and runs each distinct set of
// checks among the registry's policies once, never once for each tool,
// and allocates nothing once its key has been seen. The zero
// Visibility filters nothing: its Key is "" and Sees is true for any id.
type Visibility struct {
	index    *visibilityIndex
	protocol string
	key      string
}

// Visibility returns what a caller with identity id (nil for a caller that
// proved nothing) may see of the registry's current catalog through
// protocol. An empty protocol leaves the protocol out, for a listing that
// spans protocols (the registry view's). With
// [RegistryOptions.ListEveryTool], or when no tool has a policy whose
// checks depend on the caller, the caller sees every tool the protocol
// may call, and the Key is "".
//
// Adapters of other wire formats cache a listing per revision and key:
// see [Visibility.Key].
func (r *Registry) Visibility(id *Identity, protocol string) Visibility {
	return r.visibilityIn(r.current.Load(), id, protocol)
}

// visibilityIn is Registry.Visibility in the catalog snapshot cat.
func (r *Registry) visibilityIn(cat *catalog, id *Identity, protocol string) Visibility {
	x := cat.visibility()
	v := Visibility{index: x, protocol: protocol}
	if r.listEvery || len(x.classes) == 0 {
		return v
	}
	var buf [256]byte // a key longer than this (dozens of audiences) allocates
	v.key = x.intern(x.appendKey(buf[:0], id))
	return v
}

// Revision is the revision of the registry's catalog ([Registry.Revision])
// that v was made from.
func (v Visibility) Revision() uint64 {
	if v.index == nil {
		return 0
	}
	return v.index.revision
}

// Key identifies the set of tools v sees among those its protocol may
// call: two Visibility values of the same revision and protocol whose keys
// are equal see the same tools, so that a handler may build a caller's
// listing once per revision and key and serve it to every caller with
// that key. "" means every tool: the listing of the whole catalog serves.
// Two keys that differ may still see the same tools; the number of
// distinct keys grows with the distinct sets of claims callers send, so
// a cache of listings by key must be bounded.
func (v Visibility) Key() string { return v.key }

// Sees reports whether the caller may see the tool version toolID
// ("Toolkit.Tool@x.y.z", [ToolDefinition.ID]) of v's revision. It is
// false for a tool that revision does not hold.
func (v Visibility) Sees(toolID string) bool {
	if v.index == nil {
		return true
	}
	t, ok := v.index.tools[toolID]
	if !ok {
		return false
	}
	return v.sees(t)
}

// sees is Sees for a tool found in the index.
func (v Visibility) sees(t toolVisibility) bool {
	if v.protocol != "" && !t.policy.AllowsProtocol(v.protocol) {
		return false
	}
	if v.key == "" || t.class < 0 {
		return true
	}
	x := v.index
	if v.key[1+t.class/8]&(1<<(t.class%8)) == 0 {
		return false
	}
	if t.resource < 0 {
		return true
	}
	audiences := v.key[1+x.classBytes:]
	n := len(audiences) / 4
	i := sort.Search(n, func(i int) bool { return number(audiences[4*i:]) >= uint32(t.resource) })
	return i < n && number(audiences[4*i:]) == uint32(t.resource)
}

// number reads the number of an audience at the start of s, four bytes
// big-endian as appendKey writes it.
func number(s string) uint32 {
	return uint32(s[0])<<24 | uint32(s[1])<<16 | uint32(s[2])<<8 | uint32(s[3])
}

// visibilityIndex is what deciding visibility needs of one catalog
// snapshot, built on first use: the distinct sets of checks its policies
// make of a caller ("classes"), the audiences capability tokens must
// name, and each tool's class and audience.
type visibilityIndex struct {
	revision   uint64
	classes    []*callerNeeds
	classBytes int              // the bytes of the classes' bitmap in a key
	resources  map[string]int32 // the audiences of capability tools, numbered
	tools      map[string]toolVisibility

	// keys interns the keys made so far, so that a caller whose key was
	// seen before costs neither a lock nor an allocation: an immutable
	// map, replaced whole under mu when a key is added, at most
	// maxInterned of them.
	mu   sync.Mutex
	keys atomic.Pointer[map[string]string]
}

// maxInterned bounds the keys a visibilityIndex remembers.
const maxInterned = 256

// toolVisibility is what decides whether one tool version is visible.
type toolVisibility struct {
	policy   *Policy
	class    int // index in classes; -1: checks nothing of the caller
	resource int // number of the audience a capability token must name; -1: none
}

// visibility returns the catalog's index, building it on first use.
func (c *catalog) visibility() *visibilityIndex {
	c.visOnce.Do(func() { c.vis = buildVisibility(c) })
	return c.vis
}

func buildVisibility(c *catalog) *visibilityIndex {
	x := &visibilityIndex{
		revision:  c.revision,
		resources: map[string]int32{},
		tools:     make(map[string]toolVisibility, len(c.list)),
	}
	classes := map[string]int{}
	for _, t := range c.list {
		tv := toolVisibility{policy: t.def.Policy, class: -1, resource: -1}
		if n := t.needs; n != nil {
			if n.capability {
				r, ok := x.resources[n.resource]
				if !ok {
					r = int32(len(x.resources))
					x.resources[n.resource] = r
				}
				tv.resource = int(r)
			}
			k := n.key()
			i, ok := classes[k]
			if !ok {
				i = len(x.classes)
				classes[k] = i
				x.classes = append(x.classes, n)
			}
			tv.class = i
		}
		x.tools[t.def.ID] = tv
	}
	x.classBytes = (len(x.classes) + 7) / 8
	return x
}

// sortedSet returns a sorted copy of list without duplicates, nil for
// none.
func sortedSet(list []string) []string {
	if len(list) == 0 {
		return nil
	}
	return slices.Compact(slices.Sorted(slices.Values(list)))
}

// appendKey appends the key of a caller with identity id: a marker byte,
// the bitmap of the classes it passes, then the numbers of the audiences
// its capability token names, ascending, four bytes each.
func (x *visibilityIndex) appendKey(b []byte, id *Identity) []byte {
	b = append(b, 'v')
	start := len(b)
	for range x.classBytes {
		b = append(b, 0)
	}
	var c caller
	c.read(id)
	audiences := false // whether a class that checks the audience admits the caller
	for i := range x.classes {
		if x.classes[i].firstFailed(&c, id, false) == "" {
			b[start+i/8] |= 1 << (i % 8)
			audiences = audiences || x.classes[i].capability
		}
	}
	if !audiences {
		// The caller sees no tool that checks an audience, whatever its
		// token names: the key leaves them out, so that such callers share
		// one.
		return b
	}
	audStart := len(b)
	add := func(aud string) {
		n, ok := x.resources[aud]
		if !ok {
			return
		}
		// Insert in order, once: a token names a handful of audiences.
		i := audStart
		for ; i < len(b); i += 4 {
			switch m := int32(binary.BigEndian.Uint32(b[i:])); {
			case m == n:
				return
			case m > n:
				b = append(b, 0, 0, 0, 0)
				copy(b[i+4:], b[i:len(b)-4])
				binary.BigEndian.PutUint32(b[i:], uint32(n))
				return
			}
		}
		b = binary.BigEndian.AppendUint32(b, uint32(n))
	}
	switch aud := id.Claims["aud"].(type) {
	case string:
		add(aud)
	case []string:
		for _, a := range aud {
			add(a)
		}
	case []any:
		for _, a := range aud {
			if s, ok := a.(string); ok {
				add(s)
			}
		}
	}
	return b
}

// intern returns key as a string, the same one for every caller with
// that key while the index remembers it.
func (x *visibilityIndex) intern(key []byte) string {
	if m := x.keys.Load(); m != nil {
		if s, ok := (*m)[string(key)]; ok {
			return s
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	old := x.keys.Load()
	if old != nil {
		if s, ok := (*old)[string(key)]; ok {
			return s
		}
		if len(*old) >= maxInterned {
			return string(key)
		}
	}
	s := string(key)
	next := make(map[string]string, 1+lenOf(old))
	if old != nil {
		for k, v := range *old {
			next[k] = v
		}
	}
	next[s] = s
	x.keys.Store(&next)
	return s
}

func lenOf(m *map[string]string) int {
	if m == nil {
		return 0
	}
	return len(*m)
}
