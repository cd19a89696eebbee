// Package resource registers resources on an [otc.Registry]: data a
// client reads by URI (a file, a record, a document), beside the tools
// that act. A resource is at a fixed URI ([Register]) or at any URI of a
// template ([RegisterTemplate]), whose variables bind to the fields of a
// struct as a tool's arguments do: typed, validated and described.
//
// The registry carries its resources, under the same [otc.Policy] as its
// tools, and every server of it serves them: the MCP server lists them,
// reads them, completes their variables and tells subscribers when they
// change (see package mcp). A caller the policy does not admit sees
// nothing of a resource: it is neither listed nor read, and a read is
// answered as for a URI nothing is at.
//
// What a read function returns becomes the resource's contents: a
// string is text, a []byte binary data, an [otc.EmbeddedResource] or a
// slice of them the contents as they are (the URI of the read filled in
// where empty), and any other value its JSON encoding, as
// application/json text.
package resource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/hook"
	"github.com/otcgo/otc/internal/mcpwire"
	"github.com/otcgo/otc/internal/primitive"
	"github.com/otcgo/otc/internal/uritemplate"
)

// seam is what package otc lends the packages beside it (internal/hook).
var seam = hook.Of[otc.Registry, otc.Policy, otc.ToolDefinition, otc.CallRequest, otc.Identity, otc.Error]()

// ErrNotFound is what a read function returns (or wraps) when nothing is
// at the URI it is asked for (a file a template's path names that does
// not exist, say): the server answers as for a URI no resource matches.
var ErrNotFound = primitive.ErrNotFound

// Resource describes a resource at a fixed URI.
type Resource struct {
	// URI identifies the resource ("file:///notes/today.md",
	// "calc://constants"): an absolute URI, unique in the registry.
	URI string
	// Name identifies the resource to programs; required.
	Name string
	// Title is its name for people; optional.
	Title string
	// Description tells a model what the resource holds; optional.
	Description string
	// MIMEType is the type of its contents ("text/markdown"); empty for
	// unknown.
	MIMEType string
	// Size is the size of its contents in bytes, when known; zero for
	// unknown.
	Size int64
	// Annotations hint to clients how to use the resource; nil for none.
	Annotations *Annotations
	// Policy restricts who may list and read the resource, as a tool's
	// does its calls; nil means anyone the server lets in. A capability
	// token's audience is ResourceURI, or the resource's URI.
	Policy *otc.Policy
	// Timeout bounds a read: past it, the reader is answered with an
	// error that says so, whatever the function does. Zero means the
	// registry's DefaultTimeout; a negative value, none.
	Timeout time.Duration
	// MaxConcurrent bounds the reads under way at once: one more is
	// answered at once with an error that says to try again (-32000, 429
	// over HTTP). Zero means the registry's DefaultMaxConcurrent; a
	// negative value, none.
	MaxConcurrent int
}

// Template describes the resources whose URIs match a URI template (RFC
// 6570), read by one function that takes the template's variables as an
// In: each variable binds to the field whose JSON name it has, and is
// converted to its type and validated as a tool's argument is.
type Template[In any] struct {
	// URITemplate is the template ("file:///{path*}",
	// "db://users/{id}{?fields}"): RFC 6570 at any level whose
	// expansion a URI can be matched back against.
	URITemplate string
	// Name, Title, Description, MIMEType and Annotations are as for a
	// [Resource], of every resource of the template.
	Name        string
	Title       string
	Description string
	MIMEType    string
	Annotations *Annotations
	// Policy is as for a Resource; a capability token's audience is
	// ResourceURI, or the template as written.
	Policy *otc.Policy
	// Timeout and MaxConcurrent are as for a Resource.
	Timeout       time.Duration
	MaxConcurrent int
	// Complete, when set, suggests values for the variable argument that
	// begin with prefix, given the variables chosen already (those that
	// fit their fields). At most 100 are answered. Nil, or nil values,
	// suggests the values of the field's enum that begin with prefix.
	Complete func(ctx context.Context, argument, prefix string, chosen In) ([]string, error)
}

// Annotations hint to clients how to use a resource.
type Annotations struct {
	// Audience lists who the resource is for: "user", "assistant", or
	// both. Nil means unsaid.
	Audience []string
	// Priority is how important the resource is, from 0 (least) to 1
	// (most); nil means unsaid.
	Priority *float64
	// LastModified is when the resource last changed; zero means unsaid.
	LastModified time.Time
}

// Handle is a registered resource or template.
type Handle struct {
	set      *primitive.Set
	resource *primitive.Resource
	template *primitive.Template
}

// Changed tells the clients subscribed to the resource that its contents
// changed (MCP's notifications/resources/updated), for a template those
// subscribed to any resource of it.
func (h *Handle) Changed() {
	if h.resource != nil {
		h.set.Updated(h.resource.URI, nil, h.resource)
		return
	}
	h.set.Updated("", h.template, h.template)
}

// Remove removes the resource or template from the registry, and reports
// whether it was there. Servers announce the change of the list.
func (h *Handle) Remove() bool {
	if h.resource != nil {
		return h.set.Remove(h.resource)
	}
	return h.set.Remove(h.template)
}

// Register adds a resource whose contents read returns (see the package
// documentation for what Out may be). It fails, naming the resource and
// the culprit, when the URI is not absolute or is taken, the name is
// empty, the annotations are out of range, the policy is malformed, or
// read is nil.
func Register[Out any](reg *otc.Registry, r Resource, read func(context.Context) (Out, error)) (*Handle, error) {
	fail := func(format string, args ...any) (*Handle, error) {
		return nil, fmt.Errorf("resource: %q: %s", r.URI, fmt.Sprintf(format, args...))
	}
	if reg == nil {
		return fail("Register called with a nil *otc.Registry")
	}
	if read == nil {
		return fail("the read function is nil")
	}
	if problem := uriProblem(r.URI); problem != "" {
		return fail("%s", problem)
	}
	entry, err := encodeEntry(keyResource, r.URI, r.Name, r.Title, r.Description, r.MIMEType, r.Size, r.Annotations, r.Policy)
	if err != nil {
		return fail("%v", err)
	}
	mime := r.MIMEType
	p := &primitive.Resource{URI: r.URI, Entry: entry, Admits: admits(r.Policy, r.URI), Guard: seam.Guard(r.Policy, r.URI), Timeout: r.Timeout, MaxConcurrent: r.MaxConcurrent, Read: func(ctx context.Context, uri string) (json.RawMessage, error) {
		out, err := read(ctx)
		if err != nil {
			return nil, err
		}
		return contents(out, uri, mime)
	}}
	set := primitive.Of(reg)
	if err := set.AddResource(p); err != nil {
		return fail("%v", err)
	}
	return &Handle{set: set, resource: p}, nil
}

// RegisterTemplate adds a resource template whose resources read
// returns, given the variables of the URI read as an In (a struct, or a
// pointer to one). It fails, naming the template and the culprit, when
// the template is malformed or cannot be matched back (an expansion that
// could be read two ways), when its variables and In disagree (a
// variable without a field, a required field without a variable or
// bound to one a URI may leave out, a list bound to a single value), for
// In's type as Register of a tool would (a parameter without a
// description…), and as [Register] does for the rest.
func RegisterTemplate[In, Out any](reg *otc.Registry, t Template[In], read func(context.Context, In) (Out, error)) (*Handle, error) {
	fail := func(format string, args ...any) (*Handle, error) {
		return nil, fmt.Errorf("resource: template %q: %s", t.URITemplate, fmt.Sprintf(format, args...))
	}
	if reg == nil {
		return fail("RegisterTemplate called with a nil *otc.Registry")
	}
	if read == nil {
		return fail("the read function is nil")
	}
	tmpl, err := uritemplate.Parse(t.URITemplate)
	if err != nil {
		return fail("%v", err)
	}
	if !tmpl.Matchable() {
		return fail("a URI of its expansion could be read back two ways (two variables side by side, or a list beside text): put a literal between them")
	}
	input, err := seam.Input(reg, reflect.TypeFor[In]())
	if err != nil {
		return fail("input type %s: %v", reflect.TypeFor[In](), err)
	}
	if err := tmpl.Check(input.Params); err != nil {
		return fail("input type %s: %v", reflect.TypeFor[In](), err)
	}
	entry, err := encodeEntry(keyTemplate, t.URITemplate, t.Name, t.Title, t.Description, t.MIMEType, 0, t.Annotations, t.Policy)
	if err != nil {
		return fail("%v", err)
	}
	binding := primitive.NewBinding[In](input)
	mime := t.MIMEType
	p := &primitive.Template{Template: tmpl, Entry: entry, Admits: admits(t.Policy, t.URITemplate), Guard: seam.Guard(t.Policy, t.URITemplate), Timeout: t.Timeout, MaxConcurrent: t.MaxConcurrent,
		Complete: primitive.NewCompleter(input.Params, t.Complete),
		Read: func(ctx context.Context, uri string, vars uritemplate.Values) (json.RawMessage, error) {
			in, err := binding.Bind(vars)
			if err != nil {
				return nil, err
			}
			out, err := read(ctx, in)
			if err != nil {
				return nil, err
			}
			return contents(out, uri, mime)
		}}
	set := primitive.Of(reg)
	if err := set.AddTemplate(p); err != nil {
		return fail("%v", err)
	}
	return &Handle{set: set, template: p}, nil
}

// admits is what admits a caller to an entry guarded by policy p, whose
// subject (its audience by default) is subject.
func admits(p *otc.Policy, subject string) primitive.Admits {
	return seam.Admits(p, subject)
}

// uriProblem says what is wrong with a resource's URI, or "".
func uriProblem(uri string) string { return primitive.URIProblem(uri) }

// encodeEntry encodes the object a list shows, under key (uri or
// uriTemplate) with value, and checks what a registration gives.
// The kinds of entry encodeEntry writes.
const (
	keyResource = iota
	keyTemplate
)

func encodeEntry(key int, value, name, title, description, mime string, size int64, a *Annotations, p *otc.Policy) (json.RawMessage, error) {
	switch {
	case strings.TrimSpace(name) == "":
		return nil, errors.New("the name (Name) is required")
	case strings.ContainsAny(title, "\r\n"):
		return nil, errors.New("the title (Title) must be one line")
	case size < 0:
		return nil, errors.New("the size (Size) is negative")
	}
	if problem := seam.PolicyProblem(p); problem != "" {
		return nil, errors.New("Policy: " + problem)
	}
	entry := mcpwire.Resource{Name: name, Title: title, Description: description, MIMEType: mime, Size: size}
	if key == keyTemplate {
		entry.URITemplate = value
	} else {
		entry.URI = value
	}
	if a != nil {
		var ann mcpwire.ResourceAnnotations
		for _, who := range a.Audience {
			if who != "user" && who != "assistant" {
				return nil, fmt.Errorf("Annotations.Audience holds %q: it is \"user\" or \"assistant\"", who)
			}
		}
		ann.Audience = a.Audience
		if a.Priority != nil {
			if pr := *a.Priority; pr < 0 || pr > 1 || math.IsNaN(pr) {
				return nil, fmt.Errorf("Annotations.Priority is %v: it is from 0 to 1", pr)
			}
			ann.Priority = a.Priority
		}
		if !a.LastModified.IsZero() {
			ann.LastModified = a.LastModified.UTC().Format(time.RFC3339)
		}
		if len(ann.Audience) > 0 || ann.Priority != nil || ann.LastModified != "" {
			b, err := json.Marshal(ann)
			if err != nil {
				return nil, err
			}
			entry.Annotations = b
		}
	}
	return json.Marshal(entry)
}

// contents encodes what a read function returned as the contents array
// of the resource at uri.
func contents(out any, uri, mime string) (json.RawMessage, error) {
	var list []otc.EmbeddedResource
	switch v := out.(type) {
	case string: // the usual contents, written as they are
		return oneContents(uri, orDefault(mime, "text/plain"), "text", v, nil), nil
	case []byte:
		return oneContents(uri, orDefault(mime, "application/octet-stream"), "blob", "", v), nil
	case otc.EmbeddedResource:
		list = []otc.EmbeddedResource{v}
	case *otc.EmbeddedResource:
		if v == nil {
			return nil, errors.New("the read function returned a nil *otc.EmbeddedResource")
		}
		list = []otc.EmbeddedResource{*v}
	case []otc.EmbeddedResource:
		if len(v) == 0 {
			return nil, errors.New("the read function returned no contents")
		}
		list = v
	default:
		b, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("the contents cannot be encoded as JSON: %v", err)
		}
		list = []otc.EmbeddedResource{{URI: uri, MIMEType: orDefault(mime, "application/json"), Text: string(b)}}
	}
	enc := make([]any, len(list))
	for i, c := range list {
		if c.URI == "" {
			c.URI = uri
		}
		if c.MIMEType == "" {
			c.MIMEType = mime
		}
		if c.Blob != nil {
			enc[i] = mcpwire.BlobContents{URI: c.URI, MIMEType: c.MIMEType, Blob: c.Blob}
		} else {
			enc[i] = mcpwire.TextContents{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text}
		}
	}
	return json.Marshal(enc)
}

// oneContents writes the contents array of one text or binary contents.
func oneContents(uri, mime, member, text string, blob []byte) json.RawMessage {
	b := make([]byte, 0, 48+len(uri)+len(mime)+len(text)+len(blob)*4/3)
	return mcpwire.AppendOneContents(b, uri, mime, text, blob, member == "blob")
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
