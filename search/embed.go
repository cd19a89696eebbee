package search

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/backoff"
)

// An Embedder turns texts into vectors (an embedding model): a search
// ranks tools by how near their vectors are to the query's, beside the
// words they share. Embed returns one vector per text, in order, all of
// one length.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// The defaults of [EmbeddingOptions].
const (
	// DefaultEmbedTimeout bounds the embedding of a query: past it, the
	// words alone rank the tools.
	DefaultEmbedTimeout = 500 * time.Millisecond
	// DefaultEmbedBatch is how many tools' texts one Embed call takes
	// when the catalog's vectors are made.
	DefaultEmbedBatch = 64
	// fusionK is reciprocal rank fusion's constant: a result's score is
	// the sum over the rankings of 1/(fusionK + its rank).
	fusionK = 60
)

// EmbeddingOptions configure [UseEmbedder].
type EmbeddingOptions struct {
	// Embedder embeds; required.
	Embedder Embedder
	// Timeout bounds each Embed call: the query's, at each search (past
	// it, or when the embedder fails, the words alone rank the tools,
	// as without an embedder), and each batch of the catalog's. Zero
	// means DefaultEmbedTimeout.
	Timeout time.Duration
	// Batch is how many tools' texts one Embed call of the catalog's
	// takes. Zero means DefaultEmbedBatch.
	Batch int
}

// semantic is the vectors of one registry's tools, and what makes them.
type semantic struct {
	opts EmbeddingOptions

	mu      sync.Mutex
	vectors map[string][]float32 // by text key (textKey)
	// keyOf is the text key of each tool of the catalog the vectors are
	// of, so that a search reads a tool's vector without making its text.
	keyOf map[*otc.ToolDefinition]string
	// unit is each tool's vector at length one, for a search to weigh by
	// a dot product.
	unit     map[*otc.ToolDefinition][]float32
	revision uint64 // of the catalog the vectors are of
	updating bool
	failures int       // catalog updates that failed in a row
	retryAt  time.Time // not tried again before, after a failure
}

// semanticKey is the key of a registry's vectors among what is attached
// to it.
type semanticKey struct{}

// UseEmbedder has the searches of reg rank tools by meaning as well as
// by words: each tool's text (its name, description and parameters) is
// embedded once, when the catalog changes (in the background, a batch at
// a time, only the tools new or changed since), and each query at each
// search; the ranking by the words and the ranking by nearness are fused
// (reciprocal rank fusion), so that a query whose words the tool does
// not use ("folder" for a tool of directories) finds it. Until a tool's
// vector is made, and whenever the embedder fails or is slow (Timeout),
// the words alone rank it, as without an embedder. It fails when
// opts.Embedder is nil.
func UseEmbedder(reg *otc.Registry, opts *EmbeddingOptions) error {
	if opts == nil || opts.Embedder == nil {
		return errors.New("search: UseEmbedder needs an Embedder")
	}
	o := *opts
	if o.Timeout <= 0 {
		o.Timeout = DefaultEmbedTimeout
	}
	if o.Batch <= 0 {
		o.Batch = DefaultEmbedBatch
	}
	seam.Attached(reg).Store(semanticKey{}, &semantic{opts: o, vectors: map[string][]float32{}, keyOf: map[*otc.ToolDefinition]string{}})
	return nil
}

// semanticOf returns reg's vectors, or nil without an embedder.
func semanticOf(reg *otc.Registry) *semantic {
	if s, ok := seam.Attached(reg).Load(semanticKey{}); ok {
		return s.(*semantic)
	}
	return nil
}

// toolText is what is embedded of a tool.
func toolText(d *otc.ToolDefinition) string {
	var b strings.Builder
	b.WriteString(strings.ReplaceAll(d.Name, "_", " "))
	if d.Title != "" {
		b.WriteString(". " + d.Title)
	}
	b.WriteString(". " + d.Description)
	eachParam(d.InputSchema.Parameters, 0, func(name, description string) {
		b.WriteString(" " + name)
		if description != "" {
			b.WriteString(": " + description)
		}
	})
	return b.String()
}

// textKey keys a tool's vector by its text, so that a tool whose text
// changed is embedded again and one that did not is not.
func textKey(text string) string {
	sum := sha256.Sum256([]byte(text))
	return string(sum[:16])
}

// refresh has the vectors of the catalog's tools made, in the background,
// when the catalog changed since they were: only the texts without one.
func (s *semantic) refresh(reg *otc.Registry) {
	rev, defs := seam.Definitions(reg)
	s.mu.Lock()
	if s.updating || rev == s.revision && s.failures == 0 || time.Now().Before(s.retryAt) {
		s.mu.Unlock()
		return
	}
	s.updating = true
	s.mu.Unlock()
	go s.update(rev, defs)
}

// update makes the vectors of defs, the catalog at revision rev, and
// forgets those of tools no longer in it.
func (s *semantic) update(rev uint64, defs []*otc.ToolDefinition) {
	keep := map[string]bool{}
	keyOf := make(map[*otc.ToolDefinition]string, len(defs))
	var texts, keys []string
	s.mu.Lock()
	old := s.keyOf
	s.mu.Unlock()
	for _, d := range defs {
		k, known := old[d] // a definition is not changed once registered
		var t string
		if !known {
			t = toolText(d)
			k = textKey(t)
		}
		keyOf[d] = k
		if keep[k] {
			continue
		}
		keep[k] = true
		s.mu.Lock()
		_, has := s.vectors[k]
		s.mu.Unlock()
		if !has {
			if t == "" {
				t = toolText(d)
			}
			texts, keys = append(texts, t), append(keys, k)
		}
	}
	s.mu.Lock()
	s.keyOf = keyOf
	s.mu.Unlock()
	failed := false
	for i := 0; i < len(texts); i += s.opts.Batch {
		j := min(i+s.opts.Batch, len(texts))
		vs, err := s.embed(context.Background(), texts[i:j])
		if err != nil {
			failed = true
			break
		}
		s.mu.Lock()
		for n, v := range vs {
			s.vectors[keys[i+n]] = v
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.vectors {
		if !keep[k] {
			delete(s.vectors, k)
		}
	}
	unit := make(map[*otc.ToolDefinition][]float32, len(keyOf))
	for d, k := range keyOf {
		if v := s.vectors[k]; v != nil {
			unit[d] = normalized(v)
		}
	}
	s.unit = unit
	s.updating = false
	if failed {
		// Tried again at a later search, after a second, doubled after
		// each failure in a row up to a minute.
		s.failures++
		s.retryAt = time.Now().Add(backoff.Delay(time.Second, time.Minute, s.failures))
		return
	}
	s.revision, s.failures = rev, 0
}

// embed calls the embedder within the timeout, and checks what it gave.
func (s *semantic) embed(ctx context.Context, texts []string) ([][]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	type answer struct {
		vs  [][]float32
		err error
	}
	done := make(chan answer, 1)
	go func() {
		vs, err := s.opts.Embedder.Embed(ctx, texts)
		done <- answer{vs, err}
	}()
	select {
	case <-ctx.Done():
		return nil, ctx.Err() // an embedder that ignores its context is not waited for
	case a := <-done:
		if a.err != nil {
			return nil, a.err
		}
		if len(a.vs) != len(texts) {
			return nil, fmt.Errorf("search: the embedder gave %d vectors for %d texts", len(a.vs), len(texts))
		}
		for _, v := range a.vs {
			if len(v) == 0 || len(v) != len(a.vs[0]) {
				return nil, errors.New("search: the embedder gave vectors of different lengths")
			}
		}
		return a.vs, nil
	}
}

// near ranks the tools vis sees by the nearness of their vectors to the
// query's (cosine), one version of each (the nearest), best first, at
// most n.
func (s *semantic) near(reg *otc.Registry, query []float32, vis otc.Visibility, protocol string, n int) []Result {
	_, defs := seam.Definitions(reg)
	q := normalized(query)
	everything := vis.Key() == ""
	out := make([]Result, 0, min(len(defs), 1024))
	s.mu.Lock()
	unit := s.unit
	s.mu.Unlock()
	for _, d := range defs {
		v := unit[d]
		if len(v) != len(q) {
			continue // no vector yet, or of another model
		}
		if everything {
			if protocol != "" && !d.Policy.AllowsProtocol(protocol) {
				continue
			}
		} else if !vis.Sees(d.ID) {
			continue
		}
		var dot float32
		for i := range q {
			dot += q[i] * v[i]
		}
		out = append(out, Result{Tool: d, Score: float64(dot)})
	}
	// One version of each tool among the nearest: the first met.
	out = top(out, 2*n)
	seen := make(map[string]bool, len(out))
	kept := out[:0]
	for _, r := range out {
		key, _, _ := strings.Cut(r.Tool.ID, "@")
		if !seen[key] && len(kept) < n {
			seen[key] = true
			kept = append(kept, r)
		}
	}
	return kept
}

// normalized is v at length one (v itself when it is zero).
func normalized(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return v
	}
	inv := float32(1 / math.Sqrt(sum))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x * inv
	}
	return out
}

// fuse merges rankings by reciprocal rank fusion: each result's score is
// the sum, over the rankings it is in, of 1/(fusionK + its rank); the
// best limit, in order.
func fuse(limit int, rankings ...[]Result) []Result {
	score := map[*otc.ToolDefinition]float64{}
	byKey := map[string]*otc.ToolDefinition{} // one version of each tool
	for _, ranking := range rankings {
		for i, r := range ranking {
			key, _, _ := strings.Cut(r.Tool.ID, "@")
			d := r.Tool
			if was, ok := byKey[key]; ok {
				d = was // the version the first ranking chose
			} else {
				byKey[key] = d
			}
			score[d] += 1 / float64(fusionK+i+1)
		}
	}
	out := make([]Result, 0, len(score))
	for d, sc := range score {
		out = append(out, Result{Tool: d, Score: sc})
	}
	return top(out, limit)
}

// OpenAIEmbedder embeds through an OpenAI-compatible embeddings endpoint
// (POST {"model", "input"} and read data[].embedding): OpenAI's, and
// those of Ollama, vLLM, LM Studio and llama.cpp's server.
type OpenAIEmbedder struct {
	// URL is the endpoint, such as http://127.0.0.1:11434/v1/embeddings
	// (Ollama) or https://api.openai.com/v1/embeddings.
	URL string
	// Model names the model ("nomic-embed-text", "text-embedding-3-small").
	Model string
	// APIKey, when set, is sent as a bearer token.
	APIKey string
	// HTTPClient sends the requests; nil means http.DefaultClient.
	HTTPClient *http.Client
}

// maxEmbedResponse bounds what an embeddings endpoint may answer.
const maxEmbedResponse = 64 << 20

// Embed implements [Embedder].
func (e *OpenAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(map[string]any{"model": e.Model, "input": texts})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("search: embeddings endpoint %s: %w", e.URL, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if e.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.APIKey)
	}
	hc := e.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("search: embeddings endpoint %s: %w", e.URL, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxEmbedResponse+1))
	if err != nil {
		return nil, fmt.Errorf("search: embeddings endpoint %s: %w", e.URL, err)
	}
	if len(raw) > maxEmbedResponse {
		return nil, fmt.Errorf("search: embeddings endpoint %s answered more than %d bytes", e.URL, maxEmbedResponse)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("search: embeddings endpoint %s answered %d: %s", e.URL, resp.StatusCode, strings.TrimSpace(string(raw[:min(len(raw), 300)])))
	}
	var out struct {
		Data []struct {
			Embedding []float32 `json:"embedding"`
			Index     int       `json:"index"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("search: embeddings endpoint %s: the answer is not an embeddings list: %w", e.URL, err)
	}
	if len(out.Data) != len(texts) {
		return nil, fmt.Errorf("search: embeddings endpoint %s gave %d embeddings for %d texts", e.URL, len(out.Data), len(texts))
	}
	vs := make([][]float32, len(texts))
	for i, d := range out.Data {
		at := d.Index
		if at < 0 || at >= len(vs) || vs[at] != nil {
			at = i // an endpoint that leaves index out gives them in order
		}
		vs[at] = d.Embedding
	}
	if slices.ContainsFunc(vs, func(v []float32) bool { return v == nil }) {
		return nil, fmt.Errorf("search: embeddings endpoint %s left a text without an embedding", e.URL)
	}
	return vs, nil
}
