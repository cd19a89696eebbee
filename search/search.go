// Package search finds the tools of a registry that answer what a caller
// asks for in words, so that a model shown a catalog of thousands of
// tools can be shown the few it needs.
//
// [Tools] ranks the tools a caller may see (as [otc.Registry.Visibility]
// says: search never reveals a tool its caller could not list) by BM25F
// over their words: the tool's name (split at _ . - and changes of case),
// title, description, its parameters' names and descriptions, and the
// name of the server a federated tool comes from, each field weighted by
// how much it says about what the tool does and held to its own length.
// BM25F is the ranking of most search engines for short documents with
// fields: it counts a rare word more than a common one and a word
// repeated less than once for each time, and needs no model, no network
// and no training; its results are the same for the same catalog and
// query. A query's word also finds the words people use for the same
// thing, the longer words it begins, and, with its neighbour, the one
// word a name makes of two. docs/search.md says how it was measured on a
// catalog of real servers' tools.
//
// The index is kept for each registry and follows it: a registration or
// removal (a federated server's catalog changing) is searchable from the
// next search, which indexes the changed tools only.
//
// Linking this package in also lets the OTC handler answer
// GET /tools?q=…&limit=… with the tools a search finds (package mount
// links it in).
package search

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/mod/semver"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/hook"
)

// seam is what package otc lends the packages beside it (internal/hook).
var seam = hook.Of[otc.Registry, otc.Policy, otc.ToolDefinition, otc.CallRequest, otc.Identity, otc.Error]()

// Bounds of a search.
const (
	// DefaultLimit is how many tools a search returns when Options.Limit
	// is zero.
	DefaultLimit = 10
	// MaxLimit is the most tools a search returns.
	MaxLimit = 100
	// MaxQueryBytes bounds a query's length.
	MaxQueryBytes = 1024
	// maxQueryTerms bounds the words of a query that are searched for.
	maxQueryTerms = 32
)

// Options are a search's options. The zero value searches for
// DefaultLimit tools across protocols.
type Options struct {
	// Limit is how many tools to return at most: 1 to MaxLimit; 0 means
	// DefaultLimit.
	Limit int
	// Protocol is the wire format the caller lists tools through
	// (otc.ProtocolMCP, …), whose policy a tool must let it call; ""
	// leaves the protocol out, as the registry view's listing does.
	Protocol string
	// Request, when set, is the HTTP request the search came in, whose
	// caller's budget ([Admit]) the search's work beyond an ordinary
	// search is charged to: a search that reads ten times the postings of
	// an ordinary one costs ten searches, so that the bound on a caller's
	// CPU holds whatever it asks. The servers' handlers set it.
	Request *http.Request
}

// Result is one tool a search found.
type Result struct {
	// Tool is the tool's definition, shared with the registry's catalog:
	// read it, never change it.
	Tool *otc.ToolDefinition
	// Score ranks the result, higher first; it compares results of one
	// search only.
	Score float64
}

// Tools returns the tools of reg that the caller of ctx
// (otc.CallerIdentity) may see and that match query, best first (equal
// scores by name), one version of each tool (the best match, the highest
// version among equals). A query that holds no word to search for (only
// punctuation, or only words such as "the") finds nothing. A query
// longer than MaxQueryBytes or not in UTF-8, or a limit outside 0 to
// MaxLimit, is an *otc.Error of code otc.CodeInvalidInput naming "q" or
// "limit".
func Tools(ctx context.Context, reg *otc.Registry, query string, opts *Options) ([]Result, error) {
	o, err := prepare(query, opts)
	if err != nil {
		return nil, err
	}
	words := weighQuery(query)
	joined := compounds(query)
	if len(words) == 0 && len(joined) == 0 {
		return nil, nil
	}
	x := indexOf(reg)
	vis := reg.Visibility(otc.CallerIdentity(ctx), o.Protocol)
	sem := semanticOf(reg)
	if sem == nil {
		found, work := x.search(reg, words, joined, places(query), o.Limit, vis, o.Protocol)
		if o.Request != nil {
			charge(ctx, reg, o.Request, work)
		}
		return found, nil
	}
	// With an embedder (embed.go): the words' ranking and the vectors'
	// fused, or the words' alone when the query cannot be embedded.
	sem.refresh(reg)
	n := max(4*o.Limit, 50)
	lexical, work := x.search(reg, words, joined, places(query), n, vis, o.Protocol)
	found := top(lexical, o.Limit)
	if qv, err := sem.embed(ctx, []string{query}); err == nil {
		near := sem.near(reg, qv[0], vis, o.Protocol, n)
		work += len(near)
		found = fuse(o.Limit, lexical, near)
	}
	if o.Request != nil {
		charge(ctx, reg, o.Request, work)
	}
	return found, nil
}

// prepare returns opts with their defaults, once query and the limit are
// checked.
func prepare(query string, opts *Options) (Options, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Limit == 0 {
		o.Limit = DefaultLimit
	}
	return o, check(query, o.Limit)
}

// idf is BM25's inverse document frequency of a word that df of n
// documents hold.
func idf(n, df float64) float64 { return math.Log(1 + (n-df+0.5)/(df+0.5)) }

// bm25 is what a word of inverse frequency idf adds to a document in
// which its weighted count is tf: the count saturated (BM25's k1).
func bm25(idf, tf float64) float64 { return idf * tf * (bm25K1 + 1) / (tf + bm25K1) }

// fieldNorm is field f's weight held to its length against the average
// (BM25F's b), for a document whose field is length long.
func fieldNorm(f int, length, avg float64) float64 {
	return fieldWeight[f] / (1 - fieldB[f] + fieldB[f]*length/avg)
}

// weighted is a word searched for, and how much it counts.
type weighted struct {
	term   string
	weight float64
}

// relatedWeight is how much a word related to a query's word counts.
var relatedWeight = 0.5

// weigh turns a query's words into the words searched for: each at
// weight 1 (at most maxQueryTerms of them), and the words related to
// them at relatedWeight, in the order of the terms, so that a search
// adds the same numbers in the same order each time.
func weigh(words []string) []weighted {
	slices.Sort(words)
	words = slices.Compact(words)
	if len(words) > maxQueryTerms {
		words = words[:maxQueryTerms]
	}
	w := map[string]float64{}
	for _, t := range words {
		w[t] = 1
		if asking[t] {
			w[t] = askingWeight
		}
	}
	for _, t := range words {
		for _, r := range related[t] {
			if w[r] < relatedWeight {
				w[r] = relatedWeight
			}
		}
		if asking[t] {
			continue // a word a request is made with: its senses are not what is asked for
		}
		for _, r := range lexicon()[t] {
			if w[r] < lexiconWeight {
				w[r] = lexiconWeight
			}
		}
	}
	out := make([]weighted, 0, len(w))
	for _, t := range slices.Sorted(maps.Keys(w)) {
		out = append(out, weighted{t, w[t]})
	}
	return out
}

// weighQuery is weigh of query's terms, with the words a question asks
// for: a request asked as a question ("which teams are there", "what
// pods are running") asks to list, get or find something, "how many" to
// count; those words count at questionWeight, when the query does not
// hold them itself.
func weighQuery(query string) []weighted {
	words := weigh(terms(nil, query))
	if len(words) == 0 {
		return words
	}
	// The words of the phrases the query holds ("roll back", "jot
	// down"), which WordNet relates to single words.
	plain := strings.FieldsFunc(strings.ToLower(query), func(r rune) bool { return !unicode.IsLetter(r) })
	for i := 0; i+1 < len(plain) && i < maxQueryTerms; i++ {
		for _, r := range lexicon()[phrase(plain[i], plain[i+1])] {
			if !slices.ContainsFunc(words, func(w weighted) bool { return w.term == r }) {
				words = append(words, weighted{r, lexiconWeight})
			}
		}
	}
	var asks []string
	lower := strings.Fields(strings.ToLower(query))
	for i, w := range lower {
		switch strings.Trim(w, "?,.!'\"") {
		case "which", "what", "what's", "whats", "who", "who's", "whose", "where", "any":
			asks = append(asks, "list", "get", "find")
		case "how":
			if i+1 < len(lower) && (lower[i+1] == "many" || lower[i+1] == "much") {
				asks = append(asks, "count", "get")
			}
		}
	}
	if questionWeight == 0 {
		asks = nil
	}
	for _, a := range asks {
		if !slices.ContainsFunc(words, func(w weighted) bool { return w.term == a }) {
			words = append(words, weighted{a, questionWeight})
		}
	}
	slices.SortFunc(words, func(a, b weighted) int { return strings.Compare(a.term, b.term) })
	return slices.CompactFunc(words, func(a, b weighted) bool { return a.term == b.term })
}

// questionWeight is how much a word a question asks for counts.
var questionWeight = 0.2

// invalid is the refusal of a search's parameter param.
func invalid(param, problem string) error {
	return &otc.Error{Code: otc.CodeInvalidInput, Message: "The search's parameters are invalid", ParameterErrors: map[string]string{param: problem}}
}

// check refuses a query or limit a search does not take.
func check(query string, limit int) error {
	switch {
	case len(query) > MaxQueryBytes:
		return invalid("q", fmt.Sprintf("at most %d bytes, got %d", MaxQueryBytes, len(query)))
	case !utf8.ValidString(query):
		return invalid("q", "must be text in UTF-8")
	case limit < 1 || limit > MaxLimit:
		return invalid("limit", fmt.Sprintf("must be from 1 to %d", MaxLimit))
	}
	return nil
}

// Mode is how a server lists a catalog too large for a model to read
// whole: a caller who may see more than Threshold tools is listed the
// Pinned ones (those it may see), a tool that searches the catalog and a
// tool that calls a tool by its name. MCP's search mode (mcp.SearchMode)
// is one, and a gateway's configuration file (mcp.search_threshold,
// mcp.pinned_tools) says it.
type Mode struct {
	// Threshold is how many tools a caller may see before it is listed
	// the short list. Zero lists every caller the short list.
	Threshold int
	// Pinned names tools listed in the short list besides the two, when
	// the caller may see them.
	Pinned []string
}

// Query answers the search a request's query parameters ask for ("q",
// and "limit", DefaultLimit when absent): the ids of reg's tools that the
// request's caller sees through protocol and that match q, best first, or
// an error for a query or limit that cannot be searched with (an
// *otc.Error naming the parameter), or for a caller who searched too often
// (an *otc.Error of code otc.CodeRateLimited; see [Admit]). It is the
// search of the OTC handler's and the REST view's GET /tools?q=: give it
// as their options' Search (otc.HandlerOptions, rest.Options), as
// mount.All does.
func Query(r *http.Request, reg *otc.Registry, protocol string) ([]string, error) {
	ctx, params := r.Context(), r.URL.Query()
	limit := DefaultLimit
	if params.Has("limit") { // given, it is checked, 0 included
		n, err := strconv.Atoi(params.Get("limit"))
		if err != nil {
			return nil, invalid("limit", fmt.Sprintf("must be a whole number from 1 to %d", MaxLimit))
		}
		if err := check(params.Get("q"), n); err != nil {
			return nil, err
		}
		limit = n
	}
	if err := Admit(ctx, reg, r); err != nil {
		return nil, err
	}
	found, err := Tools(ctx, reg, params.Get("q"), &Options{Limit: limit, Protocol: protocol, Request: r})
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(found))
	for i, r := range found {
		ids[i] = r.Tool.ID
	}
	return ids, nil
}

// The fields of a tool the index reads, and how much a word in each says
// about what the tool does: the server the tool comes from (a word that
// names it names every tool of it; whether the request asks for that
// server is told by how it names it, see places), the name, the
// description's first sentence and the title, the rest of the
// description, then the parameters' names and their descriptions (which
// say more about what a tool takes than about what it does). The weights
// were chosen on the development requests of the real catalog by TestTune
// (the median of the five folds' choices), docs/search.md says how.
const (
	fieldName = iota
	fieldTitle
	fieldUpstream
	fieldParamName
	fieldDescription
	fieldDetail
	fieldParamDesc
	nFields
)

// fieldWeight is each field's weight. The description is two fields: its
// first sentence (fieldDescription), which says what the tool does, and
// the rest (fieldDetail), where a word is often mentioned in passing
// ("supports two mechanisms").
var fieldWeight = [nFields]float64{
	fieldName:        3,
	fieldTitle:       1,
	fieldUpstream:    4.5,
	fieldDescription: 1.5,
	fieldDetail:      1,
	fieldParamName:   0.5,
	fieldParamDesc:   0.25,
}

// fieldB is how much each field is held to its length (BM25F's b): a
// server's name is one or two words whatever the tool, and is not.
var fieldB = [nFields]float64{
	fieldName:        0.75,
	fieldTitle:       0.75,
	fieldUpstream:    0,
	fieldParamName:   0.75,
	fieldDescription: 0.75,
	fieldDetail:      0.75,
	fieldParamDesc:   0.75,
}

// A query's word of at least minPrefix letters also searches for the
// longer words it begins, maxPrefixed of them at most, at prefixWeight.
const (
	minPrefix   = 4
	maxPrefixed = 4
)

var prefixWeight = 0.3

// serverBoost multiplies the score of a tool of a server the query names.
var serverBoost = 3.5

// namedWeight is how much a word of a server's name the query names
// counts as a word of what it asks for.
var namedWeight = 0.15

// BM25's saturation (k1): how soon repeating a word stops counting; 2,
// at the top of the usual range, as BM25F's weighted counts are larger
// than plain BM25's (measured on the real catalog: docs/search.md).
var bm25K1 = 2.0

// upstreamKey is the _meta key under which a federated tool names the
// server it comes from (federation.MetaUpstream).
const upstreamKey = "io.github.otcgo.federation/upstream"

// doc is one tool version as the index holds it.
type doc struct {
	def  *otc.ToolDefinition
	fam  *family // its tool, "Toolkit.Tool"
	slot int32   // its place in index.slots
	lens [nFields]float64
	// norm is each field's weight, held to the field's length against
	// the catalog's average (BM25F), as of the last sync.
	norm  [nFields]float32
	words []string // its distinct words
	// server is the words of the server the tool comes from: a
	// federated tool's upstream, or else the toolkit of its id
	// ("Toolkit.Tool").
	server []string
}

// counts are how often a word is in each field of a doc.
type counts [nFields]float32

// posting is a doc a word is in, and how often in each field.
type posting struct {
	d *doc
	c counts
}

// family is the versions of one tool the index holds.
type family struct {
	key      string // "Toolkit.Tool"
	versions int
}

// index is the index of one registry's tools.
type index struct {
	mu       sync.RWMutex
	revision uint64
	synced   bool
	docs     map[*otc.ToolDefinition]*doc
	postings map[string][]posting // word → the tools it is in, with its counts
	totals   [nFields]float64     // the sum of the docs' lengths, by field
	families map[string]*family
	// servers counts the tools of each word of a server's name.
	servers map[string]int
	// slots numbers the docs, so that a search adds their scores up in a
	// slice rather than a map; free lists the slots of docs removed.
	slots []*doc
	free  []int32
	// terms are the words of postings, sorted, for the words a query's
	// word begins (prefixes); newTerms and goneTerms are the words a sync
	// put in and took out.
	terms, newTerms, goneTerms []string
}

// indexKey is the key of a registry's index among what is attached to it.
type indexKey struct{}

// indexOf returns reg's index, made on first use.
func indexOf(reg *otc.Registry) *index {
	m := seam.Attached(reg)
	if x, ok := m.Load(indexKey{}); ok {
		return x.(*index)
	}
	x, _ := m.LoadOrStore(indexKey{}, &index{docs: map[*otc.ToolDefinition]*doc{}, postings: map[string][]posting{}, families: map[string]*family{}, servers: map[string]int{}})
	return x.(*index)
}

// sync brings the index up to the registry's catalog: the tools that
// left are taken out and those that came are indexed; the others (the
// same definition from one revision to the next) are not looked at
// again. It is called with x.mu held.
func (x *index) sync(reg *otc.Registry) {
	rev, all := seam.Definitions(reg)
	if x.synced && rev == x.revision {
		return
	}
	defs := all
	current := make(map[*otc.ToolDefinition]bool, len(defs))
	for _, d := range defs {
		current[d] = true
	}
	x.newTerms, x.goneTerms = x.newTerms[:0], x.goneTerms[:0]
	for def, d := range x.docs {
		if !current[def] {
			x.remove(d)
		}
	}
	for _, def := range defs {
		if x.docs[def] == nil {
			x.add(def)
		}
	}
	x.syncTerms()
	// The fields' average lengths moved: each doc's norms with them.
	n := float64(max(len(x.docs), 1))
	var avg [nFields]float64
	for f := range nFields {
		avg[f] = max(x.totals[f]/n, 1)
	}
	for _, d := range x.docs {
		for f := range nFields {
			d.norm[f] = float32(fieldNorm(f, d.lens[f], avg[f]))
		}
	}
	x.revision, x.synced = rev, true
}

// syncTerms brings the sorted terms up to the postings after a sync: the
// words that came in and went out are put in and taken out one by one
// when they are few, and the list is sorted again when they are many.
func (x *index) syncTerms() {
	if len(x.newTerms)+len(x.goneTerms) > 256 || x.terms == nil {
		x.terms = slices.Sorted(maps.Keys(x.postings))
		return
	}
	for _, t := range x.goneTerms {
		if _, still := x.postings[t]; still {
			continue // out with one tool, in with another
		}
		if i, found := slices.BinarySearch(x.terms, t); found {
			x.terms = slices.Delete(x.terms, i, i+1)
		}
	}
	for _, t := range x.newTerms {
		if _, still := x.postings[t]; !still {
			continue
		}
		if i, found := slices.BinarySearch(x.terms, t); !found {
			x.terms = slices.Insert(x.terms, i, t)
		}
	}
}

func (x *index) add(def *otc.ToolDefinition) {
	key, _, _ := strings.Cut(def.ID, "@")
	fam := x.families[key]
	if fam == nil {
		fam = &family{key: key}
		x.families[key] = fam
	}
	fam.versions++
	d := &doc{def: def, fam: fam}
	if n := len(x.free); n > 0 {
		d.slot = x.free[n-1]
		x.free = x.free[:n-1]
		x.slots[d.slot] = d
	} else {
		d.slot = int32(len(x.slots))
		x.slots = append(x.slots, d)
	}
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
	// The server the tool comes from: a federated tool's upstream, else
	// the toolkit of its id. Its words are a field of their own, and are
	// taken off the front of the name that repeats them
	// ("line_get_profile" is get, profile of the server line), so that a
	// request's word that happens to be a server's name ("a line of
	// code") does not find every tool of that server as a word of their
	// names.
	if len(def.Meta) > 0 {
		var meta map[string]any
		if json.Unmarshal(def.Meta, &meta) == nil {
			if up, ok := meta[upstreamKey].(string); ok {
				d.server = terms(nil, up)
			}
		}
	}
	if toolkit, _, found := strings.Cut(key, "."); d.server == nil && found {
		d.server = terms(nil, toolkit)
	}
	name := withoutPrefix(terms(nil, def.Name), d.server)
	field(name, fieldName)
	if k := withoutPrefix(terms(nil, key), d.server); !slices.Equal(k, name) {
		// An id that says more than the name (a name given apart from
		// it); the default name is the id's words again.
		field(k, fieldName)
	}
	field(d.server, fieldUpstream)
	field(terms(nil, def.Title), fieldTitle)
	summary, detail := firstSentence(def.Description)
	field(terms(nil, summary), fieldDescription)
	field(terms(nil, detail), fieldDetail)
	eachParam(def.InputSchema.Parameters, 0, func(name, description string) {
		field(terms(nil, name), fieldParamName)
		field(terms(nil, description), fieldParamDesc)
	})
	d.server = slices.Compact(slices.Sorted(slices.Values(d.server)))
	for _, t := range d.server {
		x.servers[t]++
	}
	x.docs[def] = d
	for f := range nFields {
		x.totals[f] += d.lens[f]
	}
	d.words = make([]string, 0, len(tf))
	for t, c := range tf {
		d.words = append(d.words, t)
		p, ok := x.postings[t]
		if !ok {
			x.newTerms = append(x.newTerms, t)
		}
		x.postings[t] = append(p, posting{d, *c})
	}
}

func (x *index) remove(d *doc) {
	delete(x.docs, d.def)
	x.slots[d.slot] = nil
	x.free = append(x.free, d.slot)
	if d.fam.versions--; d.fam.versions == 0 {
		delete(x.families, d.fam.key)
	}
	for f := range nFields {
		x.totals[f] -= d.lens[f]
	}
	for _, t := range d.server {
		if x.servers[t]--; x.servers[t] <= 0 {
			delete(x.servers, t)
		}
	}
	for _, t := range d.words {
		p := x.postings[t]
		i := slices.IndexFunc(p, func(e posting) bool { return e.d == d })
		if i < 0 {
			continue
		}
		last := len(p) - 1
		p[i] = p[last]
		p[last] = posting{}
		if p = p[:last]; len(p) == 0 {
			delete(x.postings, t)
			x.goneTerms = append(x.goneTerms, t)
		} else {
			x.postings[t] = p
		}
	}
}

// withoutPrefix returns words without prefix at their front, when they
// begin with it and say more than it.
func withoutPrefix(words, prefix []string) []string {
	if len(prefix) > 0 && len(words) > len(prefix) && slices.Equal(words[:len(prefix)], prefix) {
		return words[len(prefix):]
	}
	return words
}

// firstSentence splits a description after its first sentence: at the
// first full stop, question or exclamation mark followed by white space
// (not one of an abbreviation such as "e.g. " or a version such as
// "1.2"), or at the first blank line.
func firstSentence(s string) (first, rest string) {
	for i := 0; i+1 < len(s); i++ {
		switch c := s[i]; {
		case c == '\n' && s[i+1] == '\n':
			return s[:i], s[i:]
		case (c == '.' || c == '?' || c == '!') && (s[i+1] == ' ' || s[i+1] == '\n' || s[i+1] == '\t'):
			if c == '.' && abbreviation(s[:i]) {
				continue
			}
			return s[:i+1], s[i+1:]
		}
	}
	return s, ""
}

// abbreviation reports whether the text before a full stop ends in an
// abbreviation such as "e.g", "i.e", "etc" or "vs".
func abbreviation(before string) bool {
	j := strings.LastIndexAny(before, " \t\n(")
	w := strings.ToLower(before[j+1:])
	switch w {
	case "e.g", "i.e", "etc", "vs", "approx", "incl", "eg", "ie":
		return true
	}
	return false
}

// maxParamDepth bounds how deep into nested objects parameters are read.
const maxParamDepth = 3

// eachParam calls f with the name and description of each property of
// the JSON Schema schema, and of the properties of those that are
// objects, to maxParamDepth.
func eachParam(schema json.RawMessage, depth int, f func(name, description string)) {
	if len(schema) == 0 || depth >= maxParamDepth {
		return
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		var p struct {
			Description string `json:"description"`
			Title       string `json:"title"`
		}
		_ = json.Unmarshal(s.Properties[name], &p)
		f(name, strings.TrimSpace(p.Title+" "+p.Description))
		eachParam(s.Properties[name], depth+1, f)
	}
}

// search ranks the tools vis sees by words (sorted, without repeats),
// after bringing the index up to reg's catalog.
//
// work is what the search cost: the postings it read, and the tools it
// weighed for the caller (see charge).
func (x *index) search(reg *otc.Registry, words []weighted, joined, places []string, limit int, vis otc.Visibility, protocol string) (_ []Result, work int) {
	x.mu.RLock()
	rev, _ := seam.Definitions(reg)
	if !x.synced || rev != x.revision {
		x.mu.RUnlock()
		x.mu.Lock()
		x.sync(reg)
		x.mu.Unlock()
		x.mu.RLock()
	}
	defer x.mu.RUnlock()
	n := float64(len(x.docs))
	if n == 0 {
		return nil, 0
	}
	// The compounds the catalog has are words of the query too, and the
	// words a query's word begins ("mongo" for mongodb) count as related
	// ones.
	added := false
	has := func(t string) bool { return slices.ContainsFunc(words, func(w weighted) bool { return w.term == t }) }
	for _, t := range joined {
		if len(x.postings[t]) > 0 && !has(t) {
			words = append(words, weighted{t, 1})
			added = true
		}
	}
	for _, w := range words[:len(words):len(words)] {
		if w.weight < 1 || len(w.term) < minPrefix {
			continue
		}
		i, _ := slices.BinarySearch(x.terms, w.term)
		for n := 0; i < len(x.terms) && n < maxPrefixed && strings.HasPrefix(x.terms[i], w.term); i++ {
			if t := x.terms[i]; t != w.term && !has(t) {
				words = append(words, weighted{t, prefixWeight})
				added = true
				n++
			}
		}
	}
	if added {
		slices.SortFunc(words, func(a, b weighted) int { return strings.Compare(a.term, b.term) })
	}
	// The servers the query names ("… in Linear", "on slack"): their
	// tools are preferred.
	// A word that names a server counts as a word of what is asked for
	// at namedWeight only: the preference says it, and a tool that
	// repeats its server's name ("… in HubSpot") is no better for it.
	var named []string
	for _, t := range places {
		if x.servers[t] > 0 {
			named = append(named, t)
		}
	}
	if named != nil {
		words = slices.Clone(words)
		for i, w := range words {
			if slices.Contains(places, w.term) && w.weight > namedWeight {
				words[i].weight = namedWeight
			}
		}
	}
	acc := accumulators.Get().(*accumulator)
	defer acc.release()
	if len(acc.score) < len(x.slots) {
		acc.score = make([]float64, len(x.slots))
	}
	for _, w := range words { // in order, so that each sum adds in the same order
		p := x.postings[w.term]
		if len(p) == 0 {
			continue
		}
		work += len(p)
		df := float64(len(p))
		wIDF := w.weight * idf(n, df)
		for i := range p {
			e := &p[i]
			d := e.d
			if acc.score[d.slot] == 0 {
				acc.touched = append(acc.touched, d.slot)
			}
			// BM25F: each field's count weighted and held to the
			// field's length (the doc's norms), then saturated once for
			// the tool.
			var tf float32
			for f := range nFields {
				tf += e.c[f] * d.norm[f]
			}
			acc.score[d.slot] += bm25(wIDF, float64(tf))
		}
	}
	// One version of each tool the caller sees: the best match, the
	// highest version among equals; then the best limit of those.
	var best map[*family]int // index in out, for tools with several versions
	out := make([]Result, 0, min(len(acc.touched), 64))
	// A caller who sees every tool its protocol may call (the key "")
	// needs no lookup for each: the protocol's policy says.
	everything := vis.Key() == "" && vis.Revision() == x.revision
	work += len(acc.touched)
	for _, slot := range acc.touched {
		d := x.slots[slot]
		if everything {
			if protocol != "" && !d.def.Policy.AllowsProtocol(protocol) {
				continue
			}
		} else if !vis.Sees(d.def.ID) {
			continue
		}
		r := Result{Tool: d.def, Score: acc.score[slot]}
		if named != nil && slices.ContainsFunc(d.server, func(t string) bool { return slices.Contains(named, t) }) {
			r.Score *= serverBoost
		}
		if d.fam.versions == 1 {
			out = append(out, r)
			continue
		}
		if best == nil {
			best = map[*family]int{}
		}
		i, seen := best[d.fam]
		switch {
		case !seen:
			best[d.fam] = len(out)
			out = append(out, r)
		case better(r, out[i]):
			out[i] = r
		}
	}
	return top(out, limit), work
}

// better reports whether a is a better result than b of the same tool:
// a higher score, or at the same score a higher version.
func better(a, b Result) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return semver.Compare("v"+a.Tool.Version, "v"+b.Tool.Version) > 0
}

// ranks reports whether a comes before b in a search's answer: a higher
// score, or at the same score the name first.
func ranks(a, b Result) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.Tool.Name < b.Tool.Name
}

// top returns the best limit of rs, in order.
func top(rs []Result, limit int) []Result {
	if len(rs) > 4*limit {
		// Keep the best limit in order, one pass over the rest.
		kept := make([]Result, 0, limit+1)
		for _, r := range rs {
			if len(kept) == limit && !ranks(r, kept[limit-1]) {
				continue
			}
			i := sort.Search(len(kept), func(i int) bool { return ranks(r, kept[i]) })
			kept = slices.Insert(kept, i, r)
			if len(kept) > limit {
				kept = kept[:limit]
			}
		}
		return kept
	}
	sort.Slice(rs, func(i, j int) bool { return ranks(rs[i], rs[j]) })
	return rs[:min(len(rs), limit)]
}

// accumulator adds up one search's scores by doc slot; touched lists the
// slots with a score.
type accumulator struct {
	score   []float64
	touched []int32
}

var accumulators = sync.Pool{New: func() any { return new(accumulator) }}

// release zeroes what the search set and returns acc to the pool.
func (acc *accumulator) release() {
	for _, s := range acc.touched {
		acc.score[s] = 0
	}
	acc.touched = acc.touched[:0]
	if cap(acc.score) <= 1<<20 {
		accumulators.Put(acc)
	}
}
