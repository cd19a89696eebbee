package search_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/search"
)

// The measurements of the search on a catalog of real servers' tools
// (docs/search.md says how it was made):
//
//   - testdata/wild-catalog.json.gz is what otc gateway, federating the public
//     MCP servers of interop/wild/servers.txt, lists in full over MCP
//     (make wild with --catalog), one MCP Tool object a line;
//   - testdata/queries.txt holds requests written as a user asks for
//     something, each with the tools that answer it.

// labelled is a request and the tools that answer it; hard, a request
// whose words are not the words of the tools that answer it (marked with
// a leading "!" in its file).
type labelled struct {
	query string
	want  []string
	line  int
	hard  bool
}

// readQueries reads a file of requests (testdata/queries.txt, or the
// held-out testdata/queries-heldout.txt): "request | tool tool…" a line,
// # for a comment.
func readQueries(t testing.TB, file string) []labelled {
	t.Helper()
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	var out []labelled
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		q, tools, ok := strings.Cut(line, "|")
		require.True(t, ok, "%s:%d: request | tools", file, n)
		hard := strings.HasPrefix(q, "!")
		out = append(out, labelled{query: strings.TrimSpace(strings.TrimPrefix(q, "!")), want: strings.Fields(tools), line: n, hard: hard})
	}
	require.NoError(t, sc.Err())
	return out
}

// scores are recall@1, recall@5 and the mean reciprocal rank (over the
// first ten results) of a ranking over a set of labelled requests.
type scores struct{ at1, at5, mrr float64 }

func (s scores) String() string {
	return fmt.Sprintf("recall@1 %.3f, recall@5 %.3f, MRR %.3f", s.at1, s.at5, s.mrr)
}

// measure ranks each request's tools with rank and scores the rankings.
func measure(qs []labelled, rank func(query string) []string, missed func(labelled, []string)) scores {
	var s scores
	for _, q := range qs {
		got := rank(q.query)
		first := slices.IndexFunc(got, func(name string) bool { return slices.Contains(q.want, name) })
		switch {
		case first == 0:
			s.at1++
			fallthrough
		case first >= 0 && first < 5:
			s.at5++
		default:
			if missed != nil {
				missed(q, got)
			}
		}
		if first >= 0 && first < 10 {
			s.mrr += 1 / float64(first+1)
		}
	}
	n := float64(len(qs))
	return scores{s.at1 / n, s.at5 / n, s.mrr / n}
}

// descriptionsBM25 is the baseline: plain BM25 (k1 1.2, b 0.75) over the
// tools' descriptions alone, words split at anything not a letter or a
// digit and folded to lower case, nothing else done to them.
type descriptionsBM25 struct {
	names []string
	docs  []map[string]int
	lens  []float64
	avg   float64
	df    map[string]int
}

func plainWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func newDescriptionsBM25(tools []testkit.RealTool) *descriptionsBM25 {
	x := &descriptionsBM25{df: map[string]int{}}
	var total float64
	for _, w := range tools {
		tf := map[string]int{}
		words := plainWords(w.Description)
		for _, word := range words {
			tf[word]++
		}
		for word := range tf {
			x.df[word]++
		}
		x.names = append(x.names, w.Name)
		x.docs = append(x.docs, tf)
		x.lens = append(x.lens, float64(len(words)))
		total += float64(len(words))
	}
	x.avg = total / float64(len(tools))
	return x
}

func (x *descriptionsBM25) rank(query string, limit int) []string {
	const k1, b = 1.2, 0.75
	n := float64(len(x.docs))
	type hit struct {
		name  string
		score float64
	}
	var hits []hit
	words := slices.Compact(slices.Sorted(slices.Values(plainWords(query))))
	for i, tf := range x.docs {
		var score float64
		for _, w := range words {
			f := float64(tf[w])
			if f == 0 {
				continue
			}
			df := float64(x.df[w])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			score += idf * f * (k1 + 1) / (f + k1*(1-b+b*x.lens[i]/x.avg))
		}
		if score > 0 {
			hits = append(hits, hit{x.names[i], score})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].name < hits[j].name
	})
	out := make([]string, 0, limit)
	for _, h := range hits[:min(limit, len(hits))] {
		out = append(out, h.name)
	}
	return out
}

// The sets of labelled requests: the development set, on which the
// ranking's weights are chosen (TestTune), and the held-out sets, never
// used to choose anything: queries-heldout.txt (written with the
// development set, over the same servers) and queries-unseen.txt (written
// before any tuning over servers added to the catalog after it, none of
// whose tools the weights were chosen on).
var requestSets = []struct {
	file string
	held bool
}{
	{"testdata/queries.txt", false},
	{"testdata/queries-heldout.txt", true},
	{"testdata/queries-unseen.txt", true},
}

// The aims on requests the ranking was never tuned on (issue 70): recall@5
// of 0.9 or more, 0.75 on the hard ones, recall@1 of 0.65. The words'
// ranking alone does not reach them (docs/search.md has the figures); the
// test reports how far it is, and holds the ranking to what it reached
// when the held-out sets were first measured, so that a change that
// loses ground fails.
const (
	aimAt5     = 0.9
	aimHardAt5 = 0.75
	aimAt1     = 0.65

	floorDevAt5      = 0.86
	floorHeldAt5     = 0.76
	floorHeldAt1     = 0.52
	floorHeldHardAt5 = 0.33
)

// TestRecallOnRealCatalog measures the search on the catalog of real
// servers' tools against each set of labelled requests, beside plain BM25
// over the descriptions, and holds it to the aims on the held-out
// requests taken together, and ahead of the baseline on every set.
func TestRecallOnRealCatalog(t *testing.T) {
	t.Parallel()
	tools := testkit.RealCatalog(t)
	require.GreaterOrEqual(t, len(tools), 1400, "a catalog of fourteen hundred real tools at least")
	names := map[string]bool{}
	for _, w := range tools {
		names[w.Name] = true
	}
	reg := testkit.RealRegistry(t, tools, 1)
	ctx := context.Background()
	ours := func(query string) []string {
		found, err := search.Tools(ctx, reg, query, &search.Options{Limit: 10})
		require.NoError(t, err)
		out := make([]string, len(found))
		for i, r := range found {
			out[i] = r.Tool.Name
		}
		return out
	}
	base := newDescriptionsBM25(tools)
	baseline := func(query string) []string { return base.rank(query, 10) }
	var held, heldHard []labelled
	var dev scores
	total := 0
	for _, set := range requestSets {
		qs := readQueries(t, set.file)
		total += len(qs)
		for _, q := range qs {
			for _, w := range q.want {
				require.True(t, names[w], "%s:%d: %q is no tool of the catalog", set.file, q.line, w)
			}
		}
		var hard []labelled
		for _, q := range qs {
			if q.hard {
				hard = append(hard, q)
			}
		}
		missed := func(q labelled, got []string) {
			t.Logf("missed at 5: %s:%d %q → %v (want %v)", set.file, q.line, q.query, got[:min(5, len(got))], q.want)
		}
		o, b := measure(qs, ours, missed), measure(qs, baseline, nil)
		if !set.held {
			dev = o
		}
		t.Logf("%s, %d requests: search %v; BM25 over descriptions %v", set.file, len(qs), o, b)
		if len(hard) > 0 {
			t.Logf("%s, its %d hard requests: search %v; BM25 over descriptions %v", set.file, len(hard), measure(hard, ours, nil), measure(hard, baseline, nil))
		}
		assert.Greater(t, o.at5, b.at5, "%s: ahead of the baseline at 5", set.file)
		assert.Greater(t, o.mrr, b.mrr, "%s: ahead of the baseline in MRR", set.file)
		if set.held {
			held = append(held, qs...)
			heldHard = append(heldHard, hard...)
		}
	}
	require.GreaterOrEqual(t, total, 400, "four hundred labelled requests at least")
	h, hh := measure(held, ours, nil), measure(heldHard, ours, nil)
	t.Logf("%d tools; every held-out request (%d): search %v; the hard ones (%d): %v", len(tools), len(held), h, len(heldHard), hh)
	t.Logf("the aims on held-out requests: recall@5 %.2f (%.3f), recall@1 %.2f (%.3f), hard recall@5 %.2f (%.3f)", aimAt5, h.at5, aimAt1, h.at1, aimHardAt5, hh.at5)
	assert.GreaterOrEqual(t, dev.at5, floorDevAt5, "development requests: recall@5")
	assert.GreaterOrEqual(t, h.at5, floorHeldAt5, "held out: recall@5")
	assert.GreaterOrEqual(t, h.at1, floorHeldAt1, "held out: recall@1")
	assert.GreaterOrEqual(t, hh.at5, floorHeldHardAt5, "held out, hard: recall@5")
}

// BenchmarkRealCatalog measures a search among the real catalog's tools
// (about a thousand) and ten copies of it (about ten thousand), its p50
// and p99 beside a bare Call of a tool of the same registry, and the
// update the search makes after a registration.
func BenchmarkRealCatalog(b *testing.B) {
	tools := testkit.RealCatalog(b)
	qs := readQueries(b, "testdata/queries.txt")
	ctx := context.Background()
	for _, copies := range []int{1, 10} {
		start := heapInUse()
		reg := testkit.RealRegistry(b, tools, copies)
		registry := heapInUse() - start
		n := len(reg.Tools())
		// The index's memory: the heap the first search (which builds
		// the index) leaves in use, beside the registry's own.
		before := heapInUse()
		_, err := search.Tools(ctx, reg, "warm", nil)
		require.NoError(b, err)
		index := heapInUse() - before
		b.Run(fmt.Sprintf("index/tools=%d", n), func(b *testing.B) {
			for b.Loop() {
			}
			b.ReportMetric(float64(index)/(1<<20), "MiB")
			b.ReportMetric(float64(registry)/(1<<20), "registry-MiB")
		})
		b.Run(fmt.Sprintf("search/tools=%d", n), func(b *testing.B) {
			var took []time.Duration
			for i := 0; b.Loop(); i++ {
				start := time.Now()
				if _, err := search.Tools(ctx, reg, qs[i%len(qs)].query, &search.Options{Limit: 5}); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			p50, p99 := percentiles(took)
			b.ReportMetric(float64(p50.Microseconds()), "µs-p50")
			b.ReportMetric(float64(p99.Microseconds()), "µs-p99")
		})
		b.Run(fmt.Sprintf("call/tools=%d", n), func(b *testing.B) {
			req := &otc.CallRequest{ToolName: tools[0].Name, Input: json.RawMessage(`{}`)}
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				_, _ = reg.Call(ctx, req) // the input may be refused: the registry's path is what is measured
				took = append(took, time.Since(start))
			}
			p50, p99 := percentiles(took)
			b.ReportMetric(float64(p50.Nanoseconds())/1e3, "µs-p50")
			b.ReportMetric(float64(p99.Nanoseconds())/1e3, "µs-p99")
		})
		b.Run(fmt.Sprintf("update/tools=%d", n), func(b *testing.B) { benchUpdate(b, reg) })
	}
}

// benchUpdate measures a registration, the search after it (which
// indexes it), and the removal.
func benchUpdate(b *testing.B, reg *otc.Registry) {
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		id := fmt.Sprintf("New.tool_%d", i)
		require.NoError(b, otc.Register(reg, otc.Tool{ID: id, Version: "1.0.0", Description: "A tool just added to the catalog."},
			func(context.Context, struct{}) (string, error) { return "", nil }))
		if _, err := search.Tools(ctx, reg, "added", nil); err != nil {
			b.Fatal(err)
		}
		reg.Remove(id)
	}
}

// heapInUse is the heap in use after a collection.
func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

func percentiles(d []time.Duration) (p50, p99 time.Duration) {
	if len(d) == 0 {
		return 0, 0
	}
	slices.Sort(d)
	return d[len(d)/2], d[len(d)*99/100]
}
