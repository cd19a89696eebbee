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
	"strings"
	"sync"
	"sync/atomic"

	"github.com/otcgo/otc/internal/hook"
	"github.com/otcgo/otc/internal/uritemplate"
)

// MaxCompletions is the most values a completion answers, MCP's bound.
const MaxCompletions = 100

// Resource is a resource at a fixed URI.
type Resource struct {
	URI    string
	Entry  json.RawMessage // the Resource object resources/list shows
	Admits Admits
	// Read returns the contents array of resources/read.
	Read func(ctx context.Context, uri string) (json.RawMessage, error)
}

// Template is a resource template: the resources whose URIs match it.
type Template struct {
	Template *uritemplate.Template
	Entry    json.RawMessage // the ResourceTemplate object resources/templates/list shows
	Admits   Admits
	// Read returns the contents array of the resource at uri, whose
	// variables the template bound.
	Read func(ctx context.Context, uri string, vars uritemplate.Values) (json.RawMessage, error)
	// Complete completes a variable; nil completes none.
	Complete Completer
}

// Prompt is a prompt template.
type Prompt struct {
	Name   string
	Entry  json.RawMessage // the Prompt object prompts/list shows
	Admits Admits
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
// change leaves empty, naming the template instead.
type Change struct {
	Tools, Resources, Prompts bool
	Updated                   string
	Template                  *Template
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
}

type setKey struct{}

// Of returns the set of registry reg (an *otc.Registry), making it if it
// has none yet.
func Of(reg any) *Set {
	m := hook.Attached(reg)
	if s, ok := m.Load(setKey{}); ok {
		return s.(*Set)
	}
	fresh := &Set{listeners: map[*func(Change)]struct{}{}}
	fresh.cur.Store(&Snapshot{})
	s, _ := m.LoadOrStore(setKey{}, fresh)
	return s.(*Set)
}

// Peek returns the set of registry reg (an *otc.Registry), or nil when
// nothing was ever registered on it.
func Peek(reg any) *Set {
	if s, ok := hook.Attached(reg).Load(setKey{}); ok {
		return s.(*Set)
	}
	return nil
}

// Current returns the set of registry reg as it is: an empty snapshot
// when nothing was ever registered on it.
func Current(reg any) *Snapshot {
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
func (sn *Snapshot) Match(uri string, admits func(*Template) bool) (*Template, uritemplate.Values) {
	for _, t := range sn.Templates {
		if !admits(t) {
			continue
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

// AddResource adds r; its URI must be free.
func (s *Set) AddResource(r *Resource) error {
	return s.change(Change{Resources: true}, func(next *Snapshot) error {
		if next.Resource(r.URI) != nil {
			return Problem("a resource at " + r.URI + " is registered already")
		}
		next.Resources = insertSorted(next.Resources, r, func(a, b *Resource) int { return strings.Compare(a.URI, b.URI) })
		return nil
	})
}

// AddTemplate adds t; its template must be free.
func (s *Set) AddTemplate(t *Template) error {
	return s.change(Change{Resources: true}, func(next *Snapshot) error {
		if next.Template(t.Template.String()) != nil {
			return Problem("the resource template " + t.Template.String() + " is registered already")
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
// template.
func (s *Set) Updated(uri string, t *Template) {
	s.mu.Lock()
	ls := s.listening()
	s.mu.Unlock()
	for _, f := range ls {
		f(Change{Updated: uri, Template: t})
	}
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
