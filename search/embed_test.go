package search_test

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/search"
)

// concepts are the fake model's meanings: words of one group embed
// alike, as a real model's related words do.
var concepts = [][]string{
	{"invoice", "invoices", "bill", "bills"},
	{"make", "create", "creates", "new"},
	{"mail", "email", "message"},
}

// fakeEmbeddings is an OpenAI-compatible embeddings endpoint whose model
// puts each text's words on 16 axes: one per concept, the others hashed.
// It records how many texts each call embeds; fail makes it answer 500,
// hang makes it never answer.
type fakeEmbeddings struct {
	mu    sync.Mutex
	calls []int
	fail  bool
	hang  chan struct{}
}

func (f *fakeEmbeddings) vector(text string) []float32 {
	v := make([]float32, 16)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !('a' <= r && r <= 'z') }) {
		axis := -1
		for i, group := range concepts {
			for _, c := range group {
				if w == c {
					axis = i
				}
			}
		}
		if axis < 0 {
			h := fnv.New32a()
			_, _ = h.Write([]byte(w))
			axis = len(concepts) + int(h.Sum32()%uint32(16-len(concepts)))
		}
		v[axis]++
	}
	return v
}

func (f *fakeEmbeddings) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	f.mu.Lock()
	f.calls = append(f.calls, len(req.Input))
	fail, hang := f.fail, f.hang
	f.mu.Unlock()
	if hang != nil {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
		return
	}
	if fail || req.Model != "fake-embed" {
		http.Error(w, "the model is not loaded", http.StatusInternalServerError)
		return
	}
	type datum struct {
		Embedding []float32 `json:"embedding"`
		Index     int       `json:"index"`
	}
	out := struct {
		Data []datum `json:"data"`
	}{}
	for i, t := range req.Input {
		out.Data = append(out.Data, datum{Embedding: f.vector(t), Index: i})
	}
	_ = json.NewEncoder(w).Encode(out)
}

func (f *fakeEmbeddings) texts() (calls []int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int(nil), f.calls...)
}

// folderCatalog has a tool of invoices, which the words of "send the
// bill" miss (the search knows "bill" for no word of its), among tools
// that share other words.
func folderCatalog(t *testing.T) *otc.Registry {
	t.Helper()
	reg := otc.NewRegistry(nil)
	for _, tool := range []otc.Tool{
		{ID: "Files.Mkdir", Version: "1.0.0", Description: "Creates a directory at a path."},
		{ID: "Accounts.Raise", Version: "1.0.0", Description: "Raises an invoice for an order."},
		{ID: "Photos.Tint", Version: "1.0.0", Description: "Tints the photos of an album a colour."},
		{ID: "Files.Remove", Version: "1.0.0", Description: "Removes a file at a path."},
		{ID: "Mail.Send", Version: "1.0.0", Description: "Sends an email to someone."},
	} {
		require.NoError(t, otc.Register(reg, tool, func(context.Context, otc.NoOutput) (otc.NoOutput, error) { return otc.NoOutput{}, nil }))
	}
	return reg
}

// TestEmbedderFindsWhatWordsMiss: with an embedder, a query whose words
// no tool uses finds the tool that means it (rank fusion of the words'
// ranking and the vectors'); without one, it does not.
func TestEmbedderFindsWhatWordsMiss(t *testing.T) {
	fake := &fakeEmbeddings{}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	query := "send the bill"

	plain := folderCatalog(t)
	lexical, err := search.Tools(t.Context(), plain, query, &search.Options{Limit: 3})
	require.NoError(t, err)
	assert.NotContains(t, names(lexical), "Accounts_Raise", "the words alone miss it")

	reg := folderCatalog(t)
	require.NoError(t, search.UseEmbedder(reg, &search.EmbeddingOptions{Embedder: &search.OpenAIEmbedder{URL: srv.URL, Model: "fake-embed"}}))
	require.Eventually(t, func() bool {
		rs, err := search.Tools(t.Context(), reg, query, &search.Options{Limit: 3})
		return err == nil && slices.Contains(names(rs), "Accounts_Raise")
	}, 10*time.Second, 20*time.Millisecond, "once the catalog's vectors are made, the meaning finds it")

	// The catalog was embedded once, in one batch of its five tools;
	// each search after embeds its query alone.
	calls := fake.texts()
	assert.Contains(t, calls, 5)
	before := len(calls)
	_, err = search.Tools(t.Context(), reg, query, nil)
	require.NoError(t, err)
	assert.Equal(t, []int{1}, fake.texts()[before:], "the tools' vectors are kept")

	// A tool registered later is embedded alone.
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Files.List", Version: "1.0.0", Description: "Lists a directory."},
		func(context.Context, otc.NoOutput) (otc.NoOutput, error) { return otc.NoOutput{}, nil }))
	before = len(fake.texts())
	require.Eventually(t, func() bool {
		_, _ = search.Tools(t.Context(), reg, "list the bills", nil)
		return len(fake.texts()) >= before+4 // queries, and the new tool's batch among them
	}, 10*time.Second, 20*time.Millisecond)
	for _, n := range fake.texts()[before:] {
		assert.Equal(t, 1, n, "the query, or the one new tool: nothing embedded again")
	}
}

// TestEmbedderFallsBack: an embedder that fails, or that does not answer
// within the timeout, leaves the words' ranking as it is without one.
func TestEmbedderFallsBack(t *testing.T) {
	query := "send an email"
	want, err := search.Tools(t.Context(), folderCatalog(t), query, nil)
	require.NoError(t, err)
	require.NotEmpty(t, want)
	for name, fake := range map[string]*fakeEmbeddings{
		"failing": {fail: true},
		"hanging": {hang: make(chan struct{})},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(fake)
			t.Cleanup(func() {
				if fake.hang != nil {
					close(fake.hang)
				}
				srv.Close()
			})
			reg := folderCatalog(t)
			require.NoError(t, search.UseEmbedder(reg, &search.EmbeddingOptions{Embedder: &search.OpenAIEmbedder{URL: srv.URL, Model: "fake-embed"}, Timeout: 50 * time.Millisecond}))
			for range 3 {
				got, err := search.Tools(t.Context(), reg, query, nil)
				require.NoError(t, err)
				assert.Equal(t, names(want), names(got))
			}
		})
	}
}

// TestOpenAIEmbedderRefuses: an endpoint's error, a wrong count of
// embeddings and vectors of different lengths are errors that say so.
func TestOpenAIEmbedderRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		body string
		code int
		want string
	}{
		"status":       {`{"error":"no model"}`, http.StatusNotFound, "answered 404"},
		"count":        {`{"data":[{"embedding":[1,2]}]}`, http.StatusOK, "gave 1 embeddings for 2 texts"},
		"not_a_list":   {`[1,2]`, http.StatusOK, "not an embeddings list"},
		"no_embedding": {`{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[2]}]}`, http.StatusOK, ""},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tc.code)
				_, _ = w.Write([]byte(tc.body))
			}))
			t.Cleanup(srv.Close)
			vs, err := (&search.OpenAIEmbedder{URL: srv.URL, Model: "m"}).Embed(t.Context(), []string{"a", "b"})
			if tc.want == "" {
				require.NoError(t, err, "indexes that repeat are taken in order")
				assert.Equal(t, [][]float32{{1}, {2}}, vs)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// hashEmbedder is an Embedder in the process: each text's words hashed
// onto 64 axes, so that a benchmark measures the search's own cost.
type hashEmbedder struct{}

func (hashEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 64)
		for _, w := range strings.Fields(strings.ToLower(t)) {
			h := fnv.New32a()
			_, _ = h.Write([]byte(w))
			v[h.Sum32()%64]++
		}
		out[i] = v
	}
	return out, nil
}

// BenchmarkEmbedderSearch is a search of 1,000 and 10,000 tools with an
// embedder in the process, beside the same search without one: the
// fusion's cost, the model's aside.
func BenchmarkEmbedderSearch(b *testing.B) {
	words := strings.Fields("read write list create delete update search get send file issue repository message channel user page database table query image")
	for _, n := range []int{1_000, 10_000} {
		build := func(embed bool) *otc.Registry {
			reg := otc.NewRegistry(nil)
			for i := range n {
				w1, w2, w3 := words[i%len(words)], words[(i/len(words))%len(words)], words[(i/7)%len(words)]
				require.NoError(b, otc.Register(reg, otc.Tool{ID: "T" + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + "." + w1 + "_" + w2 + "_" + strings.Repeat("n", 1) + fmtInt(i), Version: "1.0.0",
					Description: "Does " + w1 + " with a " + w2 + " and a " + w3 + "."},
					func(context.Context, struct{}) (string, error) { return "", nil }))
			}
			if embed {
				require.NoError(b, search.UseEmbedder(reg, &search.EmbeddingOptions{Embedder: hashEmbedder{}}))
				require.Eventually(b, func() bool {
					rs, _ := search.Tools(context.Background(), reg, "create an issue in the repository", nil)
					return len(rs) > 0
				}, time.Minute, 50*time.Millisecond)
				time.Sleep(500 * time.Millisecond) // the catalog's vectors made
			}
			return reg
		}
		for _, embed := range []bool{false, true} {
			reg := build(embed)
			b.Run(fmtName(n, embed), func(b *testing.B) {
				for b.Loop() {
					if _, err := search.Tools(context.Background(), reg, "create an issue in the repository", nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func fmtInt(i int) string { b, _ := json.Marshal(i); return string(b) }

func fmtName(n int, embed bool) string {
	name := "words"
	if embed {
		name = "fused"
	}
	return name + "/tools=" + fmtInt(n)
}
