package federation

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
)

// MetaUpstream is the key of a remote tool's _meta (and of its
// definition's Meta) that names its upstream, so that a client of the
// gateway (otc inspect) can show where each tool is served from.
const MetaUpstream = "io.github.otcgo.federation/upstream"

// errTooManyTools marks a catalog over Upstream.MaxTools.
var errTooManyTools = errors.New("too many tools")

var partPattern = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// remoteTool is one version of an upstream's tool, as it is registered.
type remoteTool struct {
	u          *upstream
	localID    string // "upstream.part"
	name       string // the upstream's name of the tool, without version
	remote     string // what the client calls it by
	version    string
	def        otc.ToolDefinition
	content    bool // an MCP tool without an output schema: its content blocks are the result
	idempotent bool // running it twice does no harm, its annotations say
	print      []byte
}

// snapshot is the tools an upstream has in the registry, by local id.
type snapshot struct {
	byID map[string][]*remoteTool
}

// CollisionError is a remote tool whose local name is taken: by another
// tool of its upstream that folds into the same name, or by a tool of the
// registry. Rename or filter one of them.
type CollisionError struct {
	Upstream string
	// Tool is the local id both would have.
	Tool string
	// First and Second name the two tools.
	First, Second string
}

func (e *CollisionError) Error() string {
	return fmt.Sprintf("federation: upstream %q: %s and %s would both be served as %s; rename one (rename) or leave one out (exclude)",
		e.Upstream, e.First, e.Second, e.Tool)
}

// fold makes an upstream's tool name one part of a local id.
func fold(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}

// The prefixes of the filters' patterns, and rename's keys, that apply
// to an upstream's resources and templates (by URI or template text) and
// to its prompts (by name); a pattern without one applies to its tools.
const (
	resourcePrefix = "resource:"
	promptPrefix   = "prompt:"
)

// chosen says whether the filters serve a tool.
func (u *upstream) chosen(name string) bool {
	return u.chosenAs("", name)
}

// chosenAs says whether the filters serve what is named name, among the
// patterns of prefix (resourcePrefix, promptPrefix, or "" for a tool's):
// an include list of that kind must match it, no exclude pattern of that
// kind may.
func (u *upstream) chosenAs(prefix, name string) bool {
	of := func(ps []string) []string {
		var out []string
		for _, p := range ps {
			rest, ok := strings.CutPrefix(p, prefix)
			isTool := !strings.HasPrefix(p, resourcePrefix) && !strings.HasPrefix(p, promptPrefix)
			if prefix == "" && isTool || prefix != "" && ok {
				out = append(out, rest)
			}
		}
		return out
	}
	match := func(ps []string) bool {
		for _, p := range ps {
			if ok, _ := path.Match(p, name); ok {
				return true
			}
		}
		return false
	}
	if inc := of(u.cfg.Include); len(inc) > 0 && !match(inc) {
		return false
	}
	return !match(of(u.cfg.Exclude))
}

// remoteTools turns an upstream's catalog into the tools to register,
// grouped by local id, or the first collision within it. A tool is
// called by its id, and named by it without the version an OTC id
// carries; a tool without a version is 1.0.0.
func (u *upstream) remoteTools(defs []otc.ToolDefinition) (map[string][]*remoteTool, error) {
	out := map[string][]*remoteTool{}
	n := 0
	for _, d := range defs {
		rt := &remoteTool{u: u, def: d, remote: d.ID, name: d.ID, version: "1.0.0"}
		if d.Version != "" {
			rt.name, rt.version = strings.TrimSuffix(d.ID, "@"+d.Version), d.Version
		}
		if !u.chosen(rt.name) {
			continue
		}
		part := u.cfg.Rename[rt.name]
		if part == "" {
			part = fold(rt.name)
		}
		rt.localID = u.cfg.Name + "." + part
		for _, other := range out[rt.localID] {
			if other.name != rt.name {
				return nil, &CollisionError{Upstream: u.cfg.Name, Tool: rt.localID, First: fmt.Sprintf("its tool %q", other.name), Second: fmt.Sprintf("its tool %q", rt.name)}
			}
		}
		a := d.Annotations
		rt.idempotent = a != nil && (isTrue(a.ReadOnlyHint) || isTrue(a.IdempotentHint))
		rt.content = d.Content // content blocks, which go on as they are
		rt.print, _ = json.Marshal(struct {
			R, V string
			D    otc.ToolDefinition
		}{rt.remote, rt.version, d})
		out[rt.localID] = append(out[rt.localID], rt)
		if n++; n > u.cfg.MaxTools {
			return nil, fmt.Errorf("federation: upstream %q lists more than %d tools (Upstream.MaxTools); its catalog is not applied: choose its tools with include or exclude, or raise max_tools: %w", u.cfg.Name, u.cfg.MaxTools, errTooManyTools)
		}
	}
	return out, nil
}

// apply makes the registry serve defs, the catalog cl listed, in place of
// the last snapshot.
func (u *upstream) apply(cl *client.Client, defs []otc.ToolDefinition) error {
	next, err := u.remoteTools(defs)
	if err != nil {
		return err
	}
	f := u.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ctx != nil && f.ctx.Err() != nil {
		return fmt.Errorf("federation: upstream %q: the federation is closed", u.cfg.Name)
	}
	old := u.snap.Load()
	if old == nil {
		old = &snapshot{byID: map[string][]*remoteTool{}}
	}
	// A local id new to this upstream must be free in the registry.
	for id := range next {
		if _, ours := old.byID[id]; ours {
			continue
		}
		if d, err := f.reg.Lookup(id, otc.ProtocolOTC); err == nil {
			return &CollisionError{Upstream: u.cfg.Name, Tool: id, First: fmt.Sprintf("its tool %q", next[id][0].name), Second: "the registry's tool " + strings.SplitN(d.ID, "@", 2)[0]}
		}
		name := strings.ReplaceAll(id, ".", "_")
		if d, err := f.reg.LookupName(name, otc.ProtocolOTC); err == nil {
			return &CollisionError{Upstream: u.cfg.Name, Tool: id, First: fmt.Sprintf("its tool %q", next[id][0].name), Second: fmt.Sprintf("the registry's tool %s, named %s", strings.SplitN(d.ID, "@", 2)[0], name)}
		}
	}
	// The catalog is good: from here on it is applied whole, so the
	// upstream is up before its first tool is visible.
	u.mu.Lock()
	u.reached, u.lastErr, u.readAt, u.broken = true, "", time.Now(), false
	u.mu.Unlock()
	var out []string // gone or changed: out of the registry
	changed := map[string]bool{}
	for id, was := range old.byID {
		now, ok := next[id]
		switch {
		case !ok:
			out = append(out, id)
		case !samePrints(was, now):
			out = append(out, id)
			changed[id] = true
		}
	}
	var skipped []string
	kept := &snapshot{byID: map[string][]*remoteTool{}}
	register := func(id string) {
		for _, rt := range next[id] {
			if err := rt.register(f.reg); err != nil {
				skipped = append(skipped, fmt.Sprintf("%s: %v", rt.name, err))
				continue
			}
			kept.byID[id] = append(kept.byID[id], rt)
		}
	}
	ids := slices.Sorted(maps.Keys(next))
	// New tools first, then out with the gone and changed ones, then the
	// changed ones in again: a tool is unknown only between the last two.
	for _, id := range ids {
		if _, ours := old.byID[id]; !ours {
			register(id)
		}
	}
	f.reg.Remove(out...)
	for _, id := range ids {
		if changed[id] {
			register(id)
		} else if was, ours := old.byID[id]; ours {
			kept.byID[id] = was
		}
	}
	u.snap.Store(kept)
	u.mu.Lock()
	u.skipped = skipped
	u.mu.Unlock()
	for _, s := range skipped {
		f.logger.Warn("federation: a tool of the upstream is left out", "upstream", u.cfg.Name, "why", s)
	}
	return nil
}

func samePrints(a, b []*remoteTool) bool {
	return slices.EqualFunc(a, b, func(x, y *remoteTool) bool { return bytes.Equal(x.print, y.print) })
}

// register adds the tool to reg, with its schemas normalised.
func (rt *remoteTool) register(reg *otc.Registry) error {
	u := rt.u
	in, err := normalise(rt.def.InputSchema.Parameters, true)
	if err != nil {
		return fmt.Errorf("its input schema: %w", err)
	}
	desc := strings.TrimSpace(rt.def.Description)
	if desc == "" {
		desc = fmt.Sprintf("The tool %s of %s.", rt.name, u.cfg.Name)
	}
	policy := u.cfg.Policy
	if p, ok := u.cfg.Policies[rt.name]; ok {
		policy = p
	}
	ann := rt.def.Annotations
	if ann != nil && isTrue(ann.ReadOnlyHint) && ann.IdempotentHint != nil && !*ann.IdempotentHint {
		// MCP: idempotentHint means something only for a tool that is not
		// read-only, and servers set it false beside readOnlyHint; the
		// registry takes that pair for a contradiction.
		a := *ann
		a.IdempotentHint = nil
		ann = &a
	}
	t := otc.Tool{
		ID: rt.localID, Version: rt.version, Description: desc,
		Title: strings.TrimSpace(rt.def.Title), Annotations: ann,
		InputSchema: in, Policy: policy, Timeout: u.cfg.Timeouts.Call,
		Requirements: rt.def.Requirements,
		// A remote call may run as a local task, for a caller that takes
		// one: kept in the registry's task store, read from any replica.
		Tasks: otc.TasksOptional,
		Meta:  map[string]any{MetaUpstream: u.cfg.Name},
	}
	if rt.content {
		return otc.Register(reg, t, rt.callContent)
	}
	if len(rt.def.OutputSchema) > 0 && string(rt.def.OutputSchema) != "null" {
		if t.OutputSchema, err = normalise(rt.def.OutputSchema, false); err != nil {
			return fmt.Errorf("its output schema: %w", err)
		}
	} else if string(rt.def.OutputSchema) == "null" {
		t.OutputSchema = json.RawMessage("null")
	}
	return otc.Register(reg, t, rt.callValue)
}

// normalise makes an upstream's schema one the registry takes: a
// "$schema" other than 2020-12's is dropped; so is a "pattern" that Go's
// regular expressions cannot compile (JSON Schema's are ECMA-262's, with
// lookarounds and backreferences; the upstream still checks it); and, for
// an input schema, "type": "object" is assumed and each top-level property
// without a description is given its title, or its name.
func normalise(schema json.RawMessage, input bool) (json.RawMessage, error) {
	if len(bytes.TrimSpace(schema)) == 0 {
		if input {
			return json.RawMessage(`{"type":"object"}`), nil
		}
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(schema, &m); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if s, ok := m["$schema"].(string); ok && !strings.Contains(s, "2020-12") {
		delete(m, "$schema")
	}
	dropForeignPatterns(m, 0)
	if input {
		if _, ok := m["type"]; !ok {
			m["type"] = "object"
		}
		props, _ := m["properties"].(map[string]any)
		for name, p := range props {
			pm, ok := p.(map[string]any)
			if !ok {
				continue
			}
			if d, _ := pm["description"].(string); strings.TrimSpace(d) != "" {
				continue
			}
			if t, _ := pm["title"].(string); strings.TrimSpace(t) != "" {
				pm["description"] = t
			} else {
				pm["description"] = name
			}
		}
	}
	return json.Marshal(m)
}

// dropForeignPatterns removes, from schema s and the schemas within it,
// each "pattern" Go's regexp cannot compile. Values (default, const,
// enum, examples) are not schemas, and are left alone; depth bounds the
// walk.
func dropForeignPatterns(s map[string]any, depth int) {
	if depth > 64 {
		return
	}
	if p, ok := s["pattern"].(string); ok {
		if _, err := regexp.Compile(p); err != nil {
			delete(s, "pattern")
		}
	}
	for k, v := range s {
		switch k {
		case "default", "const", "enum", "examples":
			continue
		}
		switch v := v.(type) {
		case map[string]any:
			dropForeignPatterns(v, depth+1)
		case []any:
			for _, e := range v {
				if m, ok := e.(map[string]any); ok {
					dropForeignPatterns(m, depth+1)
				}
			}
		}
	}
}

func isTrue(b *bool) bool { return b != nil && *b }
