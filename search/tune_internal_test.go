package search

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
)

// TestTune chooses the ranking's weights on the development requests
// (testdata/queries.txt) by coordinate ascent, and says by five-fold
// cross-validation how well weights so chosen do on requests they were not
// chosen on. It is a tool rather than a check, run by hand (make
// tune-search, OTC_SEARCH_TUNE=1); the weights it prints are then written
// into search.go and lexicon.go. The held-out request files are never read.
func TestTune(t *testing.T) {
	if os.Getenv("OTC_SEARCH_TUNE") == "" {
		t.Skip("a tool run by hand: OTC_SEARCH_TUNE=1 go test -run TestTune -v ./search (make tune-search)")
	}
	reg := testkit.RealRegistry(t, testkit.RealCatalog(t), 1)
	qs := readTuneQueries(t, "testdata/queries.txt")
	params := tuneParams()
	defaults := snapshot(params)
	const folds = 5
	var tunedHeld, defaultHeld float64
	chosen := make([][]float64, len(params)) // each weight as each fold chose it
	for k := range folds {
		var train, held []tuneQuery
		for i, q := range qs {
			if i%folds == k {
				held = append(held, q)
			} else {
				train = append(train, q)
			}
		}
		restore(params, defaults)
		d := objective(reg, held)
		ascend(reg, params, train)
		h := objective(reg, held)
		for i, v := range snapshot(params) {
			chosen[i] = append(chosen[i], v)
		}
		t.Logf("fold %d: held-out %d requests: default weights %.3f, weights chosen on the other folds %.3f", k, len(held), d, h)
		tunedHeld += h / folds
		defaultHeld += d / folds
	}
	t.Logf("cross-validated (mean of recall@5 and MRR on the held fold): default %.3f, tuned %.3f", defaultHeld, tunedHeld)
	restore(params, defaults)
	before := objective(reg, qs)
	ascend(reg, params, qs)
	t.Logf("on every development request: %.3f with the weights of the code, %.3f with these:", before, objective(reg, qs))
	for i, p := range params {
		slices.Sort(chosen[i])
		t.Logf("  %-24s %-8.4g (the folds': median %.4g, %v)", p.name, *p.v, chosen[i][folds/2], chosen[i])
	}
	medians := make([]float64, len(params))
	for i := range params {
		medians[i] = chosen[i][folds/2]
	}
	restore(params, medians)
	t.Logf("with each weight the median of the folds' choices: %.3f on every development request", objective(reg, qs))
	restore(params, defaults)
	invalidate(reg)
}

type tuneQuery struct {
	query string
	want  []string
}

type tuneParam struct {
	name string
	v    *float64
	// field: a field's weight, never tried at 0 (a catalog whose tools
	// say what they do in that field must still be searchable by it).
	field bool
}

func tuneParams() []tuneParam {
	names := [nFields]string{"name", "title", "upstream", "paramName", "description", "detail", "paramDesc"}
	var ps []tuneParam
	for f := range nFields {
		if f == fieldName {
			continue // the scale: the others are relative to it
		}
		ps = append(ps, tuneParam{"fieldWeight." + names[f], &fieldWeight[f], true})
	}
	return append(ps,
		tuneParam{"relatedWeight", &relatedWeight, false},
		tuneParam{"lexiconWeight", &lexiconWeight, false},
		tuneParam{"prefixWeight", &prefixWeight, false},
		tuneParam{"bm25K1", &bm25K1, false},
		tuneParam{"serverBoost", &serverBoost, false},
		tuneParam{"questionWeight", &questionWeight, false},
		tuneParam{"namedWeight", &namedWeight, false},
	)
}

func snapshot(ps []tuneParam) []float64 {
	out := make([]float64, len(ps))
	for i, p := range ps {
		out[i] = *p.v
	}
	return out
}

func restore(ps []tuneParam, vs []float64) {
	for i, p := range ps {
		*p.v = vs[i]
	}
}

// invalidate has the next search compute the index's norms anew (field
// weights changed).
func invalidate(reg *otc.Registry) {
	x := indexOf(reg)
	x.mu.Lock()
	x.synced = false
	x.mu.Unlock()
}

// objective is the mean of recall@5 and MRR (over the first ten) of the
// search over qs.
func objective(reg *otc.Registry, qs []tuneQuery) float64 {
	invalidate(reg)
	ctx := context.Background()
	var at5, mrr float64
	for _, q := range qs {
		found, err := Tools(ctx, reg, q.query, &Options{Limit: 10})
		if err != nil {
			panic(err)
		}
		i := slices.IndexFunc(found, func(r Result) bool { return slices.Contains(q.want, r.Tool.Name) })
		if i >= 0 {
			mrr += 1 / float64(i+1)
			if i < 5 {
				at5++
			}
		}
	}
	n := float64(len(qs))
	return (at5/n + mrr/n) / 2
}

// ascend improves the weights one at a time, each tried at some
// multiples of its value, until a round changes none (four rounds at
// most).
func ascend(reg *otc.Registry, ps []tuneParam, qs []tuneQuery) {
	best := objective(reg, qs)
	for range 4 {
		changed := false
		for _, p := range ps {
			was := *p.v
			for _, m := range []float64{0, 0.5, 0.75, 1.25, 1.5, 2} {
				if m == 0 && p.field {
					continue
				}
				v := was * m
				if was == 0 {
					v = m / 4
				}
				*p.v = v
				if s := objective(reg, qs); s > best+1e-9 {
					best, was, changed = s, v, true
				}
			}
			*p.v = was
		}
		if !changed {
			break
		}
	}
}

func readTuneQueries(t *testing.T, file string) []tuneQuery {
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	var out []tuneQuery
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		q, tools, ok := strings.Cut(line, "|")
		require.True(t, ok, fmt.Sprintf("%s: %q", file, line))
		out = append(out, tuneQuery{strings.TrimSpace(q), strings.Fields(tools)})
	}
	require.NoError(t, sc.Err())
	return out
}
