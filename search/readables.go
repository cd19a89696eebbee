package search

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/primitive"
)

// Kind is what a readable is: a resource, a resource template, a prompt
// or a skill.
type Kind string

// The kinds of readables.
const (
	KindResource Kind = "resource"
	KindTemplate Kind = "template"
	KindPrompt   Kind = "prompt"
	KindSkill    Kind = "skill"
)

// Readable is a resource, template, prompt or skill a search found.
type Readable struct {
	// Kind is what it is.
	Kind Kind
	// Key names it: a resource's URI, a template's URI template, a
	// prompt's name, a skill's SKILL.md URI.
	Key string
	// Entry is the object MCP lists it as (a Resource, ResourceTemplate,
	// Prompt or Skill object), shared with the registry: read it, never
	// change it.
	Entry json.RawMessage
	// Score ranks the result, higher first; it compares results of one
	// search only.
	Score float64
}

// Readables returns the resources, resource templates, prompts and skills
// of reg (package resource, prompt and skill register them) that the
// caller of ctx may read through opts.Protocol and that match query,
// best first (equal scores by kind, then key), ranked as [Tools] ranks
// tools: by their names, titles, descriptions, URIs and a prompt's
// arguments, with the related words of a query's words. kinds, when
// given, keeps those kinds only. A skill's files are found through their
// skill, not one by one. The query and limit are checked as [Tools]
// checks them.
func Readables(ctx context.Context, reg *otc.Registry, query string, opts *Options, kinds ...Kind) ([]Readable, error) {
	o, err := prepare(query, opts)
	if err != nil {
		return nil, err
	}
	words := weighQuery(query)
	if len(words) == 0 {
		return nil, nil
	}
	ri := readablesOf(reg).sync(primitive.Current(reg))
	found, work := ri.search(ctx, words, o, kinds)
	if o.Request != nil {
		charge(ctx, reg, o.Request, work)
	}
	return found, nil
}

// readableDoc is one readable as its index holds it.
type readableDoc struct {
	r      Readable
	admits primitive.Admits
	norm   [nFields]float64
	lens   [nFields]float64
}

// readableIndex indexes the readables of one snapshot of a registry's
// set; it is made anew when the set changes (readables are far fewer
// than tools, and change seldom).
type readableIndex struct {
	revision uint64
	docs     []*readableDoc
	postings map[string][]readablePosting
}

type readablePosting struct {
	d *readableDoc
	c counts
}

// readables holds a registry's readable index, the latest made.
type readables struct {
	mu  sync.Mutex
	cur *readableIndex
}

type readablesKey struct{}

func readablesOf(reg *otc.Registry) *readables {
	m := seam.Attached(reg)
	if x, ok := m.Load(readablesKey{}); ok {
		return x.(*readables)
	}
	x, _ := m.LoadOrStore(readablesKey{}, &readables{})
	return x.(*readables)
}

// sync returns the index of sn, made if the one held is of another
// revision.
func (rs *readables) sync(sn *primitive.Snapshot) *readableIndex {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.cur != nil && rs.cur.revision == sn.Revision {
		return rs.cur
	}
	rs.cur = indexReadables(sn)
	return rs.cur
}

// readableEntry is what the index reads of an entry.
type readableEntry struct {
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	// Frontmatter is a skill's: its name and description.
	Frontmatter *struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	} `json:"frontmatter"`
	Arguments []struct {
		Name        string `json:"name"`
		Title       string `json:"title"`
		Description string `json:"description"`
	} `json:"arguments"`
}

func indexReadables(sn *primitive.Snapshot) *readableIndex {
	x := &readableIndex{revision: sn.Revision, postings: map[string][]readablePosting{}}
	var totals [nFields]float64
	add := func(kind Kind, key string, entry json.RawMessage, origin primitive.Origin, admits primitive.Admits) {
		var e readableEntry
		_ = json.Unmarshal(entry, &e) // an entry the registry made: a field it lacks is empty
		if fm := e.Frontmatter; fm != nil {
			e.Name, e.Description = fm.Name, fm.Description
		}
		d := &readableDoc{r: Readable{Kind: kind, Key: key, Entry: entry}, admits: admits}
		tf := map[string]*counts{}
		field := func(words []string, f int) {
			for _, t := range words {
				c := tf[t]
				if c == nil {
					c = new(counts)
					tf[t] = c
				}
				c[f]++
				d.lens[f]++
			}
		}
		field(terms(nil, e.Name), fieldName)
		field(terms(nil, e.Title), fieldTitle)
		summary, detail := firstSentence(e.Description)
		field(terms(nil, summary), fieldDescription)
		field(terms(nil, detail), fieldDetail)
		// The key's words (a URI's path, a template's variables) say what
		// the parameters of a tool say: what it is about.
		field(terms(nil, key), fieldParamName)
		for _, a := range e.Arguments {
			field(terms(nil, a.Name), fieldParamName)
			field(terms(nil, a.Title+" "+a.Description), fieldParamDesc)
		}
		field(terms(nil, origin.Upstream), fieldUpstream)
		for f := range nFields {
			totals[f] += d.lens[f]
		}
		for t, c := range tf {
			x.postings[t] = append(x.postings[t], readablePosting{d, *c})
		}
		x.docs = append(x.docs, d)
	}
	files, generated := map[string]bool{}, map[*primitive.Template]bool{}
	for _, s := range sn.Skills {
		add(KindSkill, s.URI, s.Entry, s.Origin, s.Admits)
		for _, f := range s.Files {
			files[f.URI] = true
		}
		generated[s.Generated] = true
	}
	for _, r := range sn.Resources {
		if !files[r.URI] {
			add(KindResource, r.URI, r.Entry, r.Origin, r.Admits)
		}
	}
	for _, t := range sn.Templates {
		if generated[t] {
			continue
		}
		add(KindTemplate, t.Template.String(), t.Entry, t.Origin, t.Admits)
	}
	for _, p := range sn.Prompts {
		add(KindPrompt, p.Name, p.Entry, primitive.Origin{}, p.Admits)
	}
	n := float64(max(len(x.docs), 1))
	for _, d := range x.docs {
		for f := range nFields {
			avg := max(totals[f]/n, 1)
			d.norm[f] = fieldNorm(f, d.lens[f], avg)
		}
	}
	return x
}

// search ranks the readables the caller of ctx may read by words; work is
// the postings and readables it read.
func (x *readableIndex) search(ctx context.Context, words []weighted, o Options, kinds []Kind) (_ []Readable, work int) {
	n := float64(len(x.docs))
	if n == 0 {
		return nil, 0
	}
	score := map[*readableDoc]float64{}
	for _, w := range words {
		p := x.postings[w.term]
		if len(p) == 0 {
			continue
		}
		work += len(p)
		df := float64(len(p))
		wIDF := w.weight * idf(n, df)
		for _, e := range p {
			var tf float64
			for f := range nFields {
				tf += float64(e.c[f]) * e.d.norm[f]
			}
			score[e.d] += bm25(wIDF, tf)
		}
	}
	out := make([]Readable, 0, min(len(score), o.Limit))
	for d, s := range score {
		work++
		if len(kinds) > 0 && !slices.Contains(kinds, d.r.Kind) {
			continue
		}
		if d.admits != nil && !d.admits(ctx, o.Protocol) {
			continue
		}
		r := d.r
		r.Score = s
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Readable) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		case a.Kind != b.Kind:
			return strings.Compare(string(a.Kind), string(b.Kind))
		}
		return strings.Compare(a.Key, b.Key)
	})
	return out[:min(len(out), o.Limit)], work
}
