// Package primitive holds what a registry serves beside its tools: the
// resources and resource templates of package resource and the prompts
// of package prompt, each already encoded as MCP lists it, with its policy
// and its functions. The public packages build the entries; the servers
// (package mcp, and the tools that stand for them) read them. A
// registry's set lives on the registry itself (internal/hook), so that
// one registry carries everything it serves.
package primitive

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/otcgo/otc"

	"github.com/otcgo/otc/internal/hook"
	"github.com/otcgo/otc/internal/uritemplate"
)

// seam is what package otc lends the packages beside it (internal/hook).
var seam = hook.Of[otc.Registry, otc.Policy, otc.ToolDefinition, otc.CallRequest, otc.Identity, otc.Error]()

// MaxCompletions is the most values a completion answers, MCP's bound.
const MaxCompletions = 100

// Origin is who serves an entry: the registry's own (the zero value,
// Rank 0), or an upstream a gateway carries (its name, and its place in
// the gateway's list plus one). Where entries of two origins could both
// answer a URI, the lower rank's answers.
type Origin struct {
	Upstream string
	Rank     int
}

// Resource is a resource at a fixed URI.
type Resource struct {
	URI    string
	Origin Origin
	Entry  json.RawMessage // the Resource object resources/list shows
	Admits Admits
	// Guard is what a read checks beyond Admits; nil for nothing.
	Guard hook.Guard
	// Timeout bounds a read; zero: the registry's DefaultTimeout.
	Timeout time.Duration
	// MaxConcurrent bounds the reads under way at once, counted in
	// Running; zero: the registry's DefaultMaxConcurrent.
	MaxConcurrent int
	Running       atomic.Int64
	// Read returns the contents array of resources/read.
	Read func(ctx context.Context, uri string) (json.RawMessage, error)
}

// Template is a resource template: the resources whose URIs match it.
type Template struct {
	Template *uritemplate.Template
	Origin   Origin
	Entry    json.RawMessage // the ResourceTemplate object resources/templates/list shows
	Admits   Admits
	Guard    hook.Guard    // what a read checks beyond Admits; nil for nothing
	Timeout  time.Duration // bounds a read; zero: the registry's DefaultTimeout
	// MaxConcurrent and Running are as for a Resource.
	MaxConcurrent int
	Running       atomic.Int64
	// Read returns the contents array of the resource at uri, whose
	// variables the template bound.
	Read func(ctx context.Context, uri string, vars uritemplate.Values) (json.RawMessage, error)
	// Complete completes a variable; nil completes none.
	Complete Completer
}

// Prompt is a prompt template.
type Prompt struct {
	Name    string
	Entry   json.RawMessage // the Prompt object prompts/list shows
	Admits  Admits
	Guard   hook.Guard    // what a render checks beyond Admits; nil for nothing
	Timeout time.Duration // bounds a render; zero: the registry's DefaultTimeout
	// MaxConcurrent and Running are as for a Resource.
	MaxConcurrent int
	Running       atomic.Int64
	// Get renders the prompt: the GetPromptResult object's members
	// (description, messages), encoded as one object.
	Get func(ctx context.Context, args map[string]string) (json.RawMessage, error)
	// Complete completes an argument; nil completes none.
	Complete Completer
}

// Admits reports whether the caller of ctx, through protocol, may see an
// entry: its policy's Admits, with the entry's subject.
type Admits func(ctx context.Context, protocol string) bool

// Completer answers completion/complete for one argument: the values
// that begin with prefix (at most MaxCompletions), their total when
// known (0 otherwise), and whether there are more than it returned.
type Completer func(ctx context.Context, argument, prefix string, chosen map[string]string) (values []string, total int, more bool, err error)

// Change is what changed in a set: its lists (Resources, Prompts; Tools
// is the registry's catalog of tools, which the set does not hold), or
// the contents of the resources at URI (Updated), which a template's
// change leaves empty, naming the template instead. Entry is the entry
// whose resource changed (a *Resource or *Template), whose policy says
// who may be told; nil when unknown.
type Change struct {
	Tools, Resources, Prompts bool
	Skills                    bool // the list of skills
	Updated                   string
	Template                  *Template
	Entry                     any
}

// Set is what a registry serves beside its tools. Readers take a
// Snapshot, which never changes; a change makes a new one.
type Set struct {
	mu        sync.Mutex // serializes changes
	cur       atomic.Pointer[Snapshot]
	listeners map[*func(Change)]struct{}
}

// Snapshot is a set as it was at one moment. Its slices are sorted (by
// URI, by template, by name) and must not be changed.
type Snapshot struct {
	Revision  uint64
	Resources []*Resource
	Templates []*Template
	Prompts   []*Prompt
	Skills    []*Skill

	// matching is Templates in the order a URI is matched against them:
	// by the rank of their origin, then by their text.
	matching []*Template
}

// MaxMatchWork bounds the work of matching one URI against templates:
// for each template tried, the URI's length times one more than the
// template's variables (what its regular expression's run costs, about),
// all tries together. A URI that would need more is taken to match
// nothing, so that no request can make the server match a long URI
// against thousands of templates: the bound allows some 3,000 tries of
// a URI of 100 bytes against templates of two variables. (Templates
// whose literal prefix the URI does not begin with cost a comparison,
// and count nothing.)
const MaxMatchWork = 1 << 20

type setKey struct{}

// Of returns the set of registry reg, making it if it
// has none yet.
func Of(reg *otc.Registry) *Set {
	m := seam.Attached(reg)
	if s, ok := m.Load(setKey{}); ok {
		return s.(*Set)
	}
	fresh := &Set{listeners: map[*func(Change)]struct{}{}}
	fresh.cur.Store(&Snapshot{})
	s, _ := m.LoadOrStore(setKey{}, fresh)
	return s.(*Set)
}

// Peek returns the set of registry reg, or nil when
// nothing was ever registered on it.
func Peek(reg *otc.Registry) *Set {
	if s, ok := seam.Attached(reg).Load(setKey{}); ok {
		return s.(*Set)
	}
	return nil
}

// Current returns the set of registry reg as it is: an empty snapshot
// when nothing was ever registered on it.
func Current(reg *otc.Registry) *Snapshot {
	if s := Peek(reg); s != nil {
		return s.Snapshot()
	}
	return &Snapshot{}
}

// Snapshot returns the set as it is.
func (s *Set) Snapshot() *Snapshot { return s.cur.Load() }

// Resource returns the resource at uri, or nil.
func (sn *Snapshot) Resource(uri string) *Resource {
	i, ok := slices.BinarySearchFunc(sn.Resources, uri, func(r *Resource, uri string) int { return strings.Compare(r.URI, uri) })
	if !ok {
		return nil
	}
	return sn.Resources[i]
}

// Template returns the template whose text is raw, or nil.
func (sn *Snapshot) Template(raw string) *Template {
	i, ok := slices.BinarySearchFunc(sn.Templates, raw, func(t *Template, raw string) int { return strings.Compare(t.Template.String(), raw) })
	if !ok {
		return nil
	}
	return sn.Templates[i]
}

// Match returns the first template that uri matches and that admits,
// with the variables it bound; nil when none does. Templates are tried in
// the order of their text, byte by byte, in which a letter, a digit or a
// slash comes before an expression ('{' sorts after them): of
// "file:///docs/{name}" and "file:///{path*}", the first is tried first.
//
// The registry's own templates are tried before a gateway's upstreams',
// and those in the order of the upstreams (Origin.Rank). A URI is
// matched against the templates whose literal prefix it begins with, up
// to MaxMatchWork.
func (sn *Snapshot) Match(uri string, admits func(*Template) bool) (*Template, uritemplate.Values) {
	work := 0
	for _, t := range sn.matching {
		if !strings.HasPrefix(uri, t.Template.Prefix()) || !admits(t) {
			continue
		}
		if work += len(uri) * (1 + t.Template.Variables()); work > MaxMatchWork {
			return nil, nil
		}
		if vs, ok := t.Template.Match(uri); ok {
			return t, vs
		}
	}
	return nil, nil
}

// Find returns what is at uri for a caller that admits admits: the
// resource at that URI, else the first template the URI matches, with
// its variables; all nil when nothing is.
func (sn *Snapshot) Find(uri string, admits func(Admits) bool) (*Resource, *Template, uritemplate.Values) {
	if r := sn.Resource(uri); r != nil && admits(r.Admits) {
		return r, nil, nil
	}
	t, vs := sn.Match(uri, func(t *Template) bool { return admits(t.Admits) })
	return nil, t, vs
}

// Prompt returns the prompt named name, or nil.
func (sn *Snapshot) Prompt(name string) *Prompt {
	i, ok := slices.BinarySearchFunc(sn.Prompts, name, func(p *Prompt, name string) int { return strings.Compare(p.Name, name) })
	if !ok {
		return nil
	}
	return sn.Prompts[i]
}

// Problem is a registration refused because its URI, template or name is
// taken.
type Problem string

func (p Problem) Error() string { return string(p) }

// AddResource adds r; its URI must be free, or held by an origin of a
// higher rank, whose resource r then takes the place of.
func (s *Set) AddResource(r *Resource) error {
	return s.change(Change{Resources: true}, func(next *Snapshot) error {
		if was := next.Resource(r.URI); was != nil {
			if was.Origin.Rank <= r.Origin.Rank {
				return Problem("a resource at " + r.URI + " is registered already" + was.Origin.by())
			}
			next.Resources = slices.DeleteFunc(slices.Clone(next.Resources), func(x *Resource) bool { return x == was })
		}
		next.Resources = insertSorted(next.Resources, r, func(a, b *Resource) int { return strings.Compare(a.URI, b.URI) })
		return nil
	})
}

// by names the origin in a problem: "" for the registry's own.
func (o Origin) by() string {
	if o.Upstream == "" {
		return ""
	}
	return " (by the upstream " + o.Upstream + ")"
}

// AddTemplate adds t; its template must be free.
func (s *Set) AddTemplate(t *Template) error {
	return s.change(Change{Resources: true}, func(next *Snapshot) error {
		if next.Template(t.Template.String()) != nil {
			return Problem("the resource template " + t.Template.String() + " is registered already" + next.Template(t.Template.String()).Origin.by())
		}
		next.Templates = insertSorted(next.Templates, t, func(a, b *Template) int { return strings.Compare(a.Template.String(), b.Template.String()) })
		return nil
	})
}

// AddPrompt adds p; its name must be free.
func (s *Set) AddPrompt(p *Prompt) error {
	return s.change(Change{Prompts: true}, func(next *Snapshot) error {
		if next.Prompt(p.Name) != nil {
			return Problem("a prompt named " + p.Name + " is registered already")
		}
		next.Prompts = insertSorted(next.Prompts, p, func(a, b *Prompt) int { return strings.Compare(a.Name, b.Name) })
		return nil
	})
}

// Remove removes the entry x (a *Resource, *Template or *Prompt) and
// reports whether the set held it.
func (s *Set) Remove(x any) bool {
	var c Change
	switch x.(type) {
	case *Resource, *Template:
		c.Resources = true
	case *Prompt:
		c.Prompts = true
	}
	removed := false
	_ = s.change(c, func(next *Snapshot) error {
		n := len(next.Resources) + len(next.Templates) + len(next.Prompts)
		next.Resources = slices.DeleteFunc(slices.Clone(next.Resources), func(r *Resource) bool { return any(r) == x })
		next.Templates = slices.DeleteFunc(slices.Clone(next.Templates), func(t *Template) bool { return any(t) == x })
		next.Prompts = slices.DeleteFunc(slices.Clone(next.Prompts), func(p *Prompt) bool { return any(p) == x })
		if removed = n != len(next.Resources)+len(next.Templates)+len(next.Prompts); !removed {
			return Problem("")
		}
		return nil
	})
	return removed
}

// change makes the next snapshot with edit and, when edit succeeds,
// swaps it in and tells the listeners.
func (s *Set) change(c Change, edit func(next *Snapshot) error) error {
	s.mu.Lock()
	cur := s.cur.Load()
	next := *cur
	next.Revision++
	if err := edit(&next); err != nil {
		s.mu.Unlock()
		return err
	}
	if c.Resources {
		next.matching = slices.Clone(next.Templates)
		slices.SortStableFunc(next.matching, func(a, b *Template) int { return a.Origin.Rank - b.Origin.Rank })
	}
	s.cur.Store(&next)
	ls := s.listening()
	s.mu.Unlock()
	for _, f := range ls {
		f(c)
	}
	return nil
}

// Updated tells the listeners that the contents of the resource at uri
// changed, or, with a template and no uri, of any resource of the
// template. entry is the *Resource or *Template whose resource changed,
// or nil when unknown; it is told only to those it admits.
func (s *Set) Updated(uri string, t *Template, entry any) {
	s.mu.Lock()
	ls := s.listening()
	s.mu.Unlock()
	for _, f := range ls {
		f(Change{Updated: uri, Template: t, Entry: entry})
	}
}

// AdmitsOf is the policy of entry (a *Resource or *Template); nil for
// anything else.
func AdmitsOf(entry any) Admits {
	switch e := entry.(type) {
	case *Resource:
		return e.Admits
	case *Template:
		return e.Admits
	}
	return nil
}

// listening is the listeners, with s.mu held.
func (s *Set) listening() []func(Change) {
	ls := make([]func(Change), 0, len(s.listeners))
	for f := range s.listeners {
		ls = append(ls, *f)
	}
	return ls
}

// Listen calls f with each change from now on, until stop is called. f
// is called on the goroutine that made the change and must not block.
func (s *Set) Listen(f func(Change)) (stop func()) {
	key := &f
	s.mu.Lock()
	s.listeners[key] = struct{}{}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.listeners, key)
		s.mu.Unlock()
	}
}

// insertSorted returns list with x inserted in order, in a new array.
func insertSorted[T any](list []T, x T, cmp func(a, b T) int) []T {
	i, _ := slices.BinarySearchFunc(list, x, cmp)
	return slices.Insert(slices.Clip(list), i, x)
}

// MaxPromptName bounds a prompt's name.
const MaxPromptName = 128

// URIProblem says what is wrong with a resource's URI, or "": every
// resource a registry serves, its own or an upstream's, has one.
func URIProblem(uri string) string {
	scheme, rest, ok := strings.Cut(uri, ":")
	switch {
	case uri == "":
		return "URI is required"
	case len(uri) > uritemplate.MaxLength:
		return "URI is longer than " + strconv.Itoa(uritemplate.MaxLength) + " bytes"
	case !ok || scheme == "" || rest == "" || strings.ContainsAny(scheme, "/?#") || strings.ContainsFunc(uri, isSpaceOrControl):
		return "URI must be absolute (scheme:rest) and hold no white space"
	}
	return ""
}

// PromptNameProblem says what is wrong with a prompt's name, or "".
func PromptNameProblem(name string) string {
	if name == "" || len(name) > MaxPromptName || strings.ContainsFunc(name, isSpaceOrControl) {
		return "Name must be 1 to " + strconv.Itoa(MaxPromptName) + " characters without white space"
	}
	return ""
}

// isSpaceOrControl reports whether r is white space or a control
// character: nothing a URI or a name holds.
func isSpaceOrControl(r rune) bool {
	return r <= ' ' || r == 0x7f || unicode.IsSpace(r) || unicode.IsControl(r)
}
