package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
)

// update rewrites the response of every golden file whose source is
// "generated". Files copied from the seeds are never rewritten: they are
// the protocol's own examples, and the server must match them.
var update = flag.Bool("update", false, "rewrite the responses of generated golden files in testdata/golden")

// mainArgsEnv, when set, makes the test binary run main() with these
// arguments instead of the tests, so that TestMain_* can start the real
// program, flags and all, as a child process.
const mainArgsEnv = "CALCULATOR_TEST_MAIN_ARGS"

func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv(mainArgsEnv); ok {
		os.Args = append([]string{os.Args[0]}, strings.Fields(args)...)
		main()
		os.Exit(0)
	}
	code := m.Run()
	stopRedis()
	os.Exit(code)
}

// goldenFile is one wire exchange in testdata/golden.
type goldenFile struct {
	// Source is "seed 000" or "seed 002" for an exchange copied by hand
	// from that seed, or "generated" for one whose response -update
	// writes (and a person then checks against SPEC.md).
	Source      string `json:"source"`
	Description string `json:"description,omitempty"`
	// Registry is "empty" to serve a registry without tools; empty means
	// the example's newRegistry.
	Registry string `json:"registry,omitempty"`
	// Match is "seed_catalog" to compare a catalog entry by entry with the
	// seed's (see compareSeedCatalog); empty means the whole body.
	Match    string         `json:"match,omitempty"`
	Request  goldenRequest  `json:"request"`
	Response goldenResponse `json:"response"`
}

type goldenRequest struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers,omitempty"`
	// Body is sent byte for byte as it stands in the file; absent means no
	// body.
	Body json.RawMessage `json:"body,omitempty"`
}

type goldenResponse struct {
	Status int `json:"status"`
	// Headers lists response headers to check; others are not compared.
	// Content-Type is always checked.
	Headers map[string]string `json:"headers,omitempty"`
	Body    json.RawMessage   `json:"body"`
}

func (g *goldenFile) fromSeed() bool { return strings.HasPrefix(g.Source, "seed ") }

// placeholderCallID is what -update writes in place of a call id the
// server generated, so that refreshing the files does not churn them. It
// has the shape of a version 4 UUID.
const placeholderCallID = "00000000-0000-4000-8000-000000000000"

// uuidV4 matches a version 4 UUID in its canonical lower-case form.
var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestGolden replays every exchange in testdata/golden against the example
// server over real HTTP and compares the answers: status, Content-Type, and
// the body as JSON. Only two things vary between runs and are compared by
// shape: result.duration (a non-negative number) and result.call_id when
// the request sent none (a version 4 UUID).
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no golden files found")

	quiet := slog.New(slog.DiscardHandler)
	reg, err := newRegistry(quiet, nil, nil, nil, false)
	require.NoError(t, err)
	servers := map[string]*httptest.Server{
		"":      httptest.NewServer(otc.NewHandler(reg, nil)),
		"empty": httptest.NewServer(otc.NewHandler(otc.NewRegistry(&otc.RegistryOptions{Logger: quiet}), nil)),
	}
	t.Cleanup(func() {
		for _, s := range servers {
			s.Close()
		}
	})

	sources := map[string]int{}
	for _, path := range files {
		var g goldenFile
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(raw, &g), path)
		sources[g.Source]++

		name := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			require.Contains(t, []string{"seed 000", "seed 002", "generated"}, g.Source, "unknown source")
			srv := servers[g.Registry]
			require.NotNil(t, srv, "unknown registry %q", g.Registry)

			status, header, body := exchange(t, srv, g.Request)
			got := checkEnvelope(t, header, body)
			normalize(t, g, got)

			if *update && !g.fromSeed() {
				writeGolden(t, path, g, status, header, got)
				return
			}

			assert.Equal(t, g.Response.Status, status, "status; body: %s", body)
			for k, v := range g.Response.Headers {
				assert.Equal(t, v, header.Get(k), "header %s", k)
			}
			var want map[string]any
			require.NoError(t, json.Unmarshal(g.Response.Body, &want), "the golden response body must be a JSON object")
			switch g.Match {
			case "":
				assertJSONEqual(t, want, got)
			case "seed_catalog":
				compareSeedCatalog(t, want, got)
			default:
				t.Fatalf("unknown match %q", g.Match)
			}
		})
	}

	// The seed's four call examples and its catalog must stay in the set:
	// a rename or a deletion would otherwise go unnoticed.
	assert.Equal(t, 4, sources["seed 002"], "golden files copied from seed 002")
	assert.Equal(t, 2, sources["seed 000"], "golden files copied from seed 000")
}

// exchange sends the request over HTTP and returns the answer.
func exchange(t *testing.T, srv *httptest.Server, gr goldenRequest) (int, http.Header, []byte) {
	t.Helper()
	var body io.Reader
	if gr.Body != nil {
		body = bytes.NewReader(gr.Body)
	}
	req, err := http.NewRequestWithContext(t.Context(), gr.Method, srv.URL+gr.Path, body)
	require.NoError(t, err)
	for k, v := range gr.Headers {
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, b
}

// checkEnvelope checks what every answer shares (SPEC §1, §2): JSON content
// type, a JSON object body, a string $schema. It returns the decoded body.
func checkEnvelope(t *testing.T, header http.Header, body []byte) map[string]any {
	t.Helper()
	assert.Equal(t, "application/json", header.Get("Content-Type"))
	var got map[string]any
	require.NoError(t, json.Unmarshal(body, &got), "the body must be a JSON object: %s", body)
	require.NotNil(t, got, "the body must be a JSON object, not null")
	assert.IsType(t, "", got["$schema"], "$schema must be a string")
	return got
}

// normalize checks the fields that differ from run to run and makes them
// comparable: result.duration must be a non-negative number, and a call id
// the server generated must be a version 4 UUID. Each is replaced with the
// golden file's value (or, when updating, a fixed one).
func normalize(t *testing.T, g goldenFile, got map[string]any) {
	t.Helper()
	result, ok := got["result"].(map[string]any)
	if !ok {
		return
	}
	var want struct {
		Result struct {
			CallID   any `json:"call_id"`
			Duration any `json:"duration"`
		} `json:"result"`
	}
	_ = json.Unmarshal(g.Response.Body, &want) // absent before the first -update
	rewriting := *update && !g.fromSeed()

	d, ok := result["duration"].(float64)
	if assert.True(t, ok, "result.duration must be a number, got %#v", result["duration"]) {
		assert.GreaterOrEqual(t, d, 0.0, "result.duration")
		if _, isNumber := want.Result.Duration.(float64); isNumber && !rewriting {
			result["duration"] = want.Result.Duration
		} else {
			result["duration"] = 0.0
		}
	}

	if sentCallID(g.Request.Body) {
		return // echoed: compared as it is
	}
	id, _ := result["call_id"].(string)
	if assert.Regexp(t, uuidV4, id, "a generated call_id must be a version 4 UUID") {
		result["call_id"] = placeholderCallID
		if s, isString := want.Result.CallID.(string); isString && !rewriting {
			result["call_id"] = s
		}
	}
}

// sentCallID reports whether a call body carries request.call_id.
func sentCallID(body json.RawMessage) bool {
	var b struct {
		Request struct {
			CallID *string `json:"call_id"`
		} `json:"request"`
	}
	return json.Unmarshal(body, &b) == nil && b.Request.CallID != nil
}

// assertJSONEqual compares two decoded JSON values and shows both as JSON
// when they differ.
func assertJSONEqual(t *testing.T, want, got any) bool {
	t.Helper()
	w, err := json.Marshal(want)
	require.NoError(t, err)
	g, err := json.Marshal(got)
	require.NoError(t, err)
	return assert.JSONEq(t, string(w), string(g))
}

// compareSeedCatalog compares the server's catalog with the seed's. The
// server may list more tools than the seed, and writes
// "additionalProperties": false in its object schemas where the seed
// leaves it out; that keyword, with that value, is the only difference
// allowed in a seed tool's entry. The seed's tools must appear in the
// seed's order (SPEC §3: by id, then version).
func compareSeedCatalog(t *testing.T, want, got map[string]any) {
	t.Helper()
	assert.Equal(t, want["$schema"], got["$schema"], "$schema")
	assert.ElementsMatch(t, []string{"$schema", "tools"}, keys(got), "top-level keys")

	byID := map[string]map[string]any{}
	position := map[string]int{}
	gotTools, ok := got["tools"].([]any)
	require.True(t, ok, "tools must be an array, got %#v", got["tools"])
	for i, tool := range gotTools {
		entry, ok := tool.(map[string]any)
		require.True(t, ok, "tools[%d] must be an object", i)
		id, _ := entry["id"].(string)
		require.NotContains(t, byID, id, "duplicate id %q", id)
		byID[id] = entry
		position[id] = i
	}

	wantTools, ok := want["tools"].([]any)
	require.True(t, ok)
	last := -1
	for _, tool := range wantTools {
		seed := tool.(map[string]any)
		id := seed["id"].(string)
		entry, ok := byID[id]
		if !assert.True(t, ok, "the server does not list %s", id) {
			continue
		}
		assert.Greater(t, position[id], last, "%s is out of the seed's order", id)
		last = position[id]

		entry = cloneJSON(t, entry).(map[string]any)
		if in, ok := entry["input_schema"].(map[string]any); ok {
			stripClosedObjects(in["parameters"])
		}
		stripClosedObjects(entry["output_schema"])
		assertJSONEqual(t, seed, entry)
	}
}

// stripClosedObjects removes "additionalProperties": false from a schema
// and the schemas nested in its properties and items, and nothing else.
func stripClosedObjects(schema any) {
	s, ok := schema.(map[string]any)
	if !ok {
		return
	}
	if v, ok := s["additionalProperties"].(bool); ok && !v {
		delete(s, "additionalProperties")
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for _, p := range props {
			stripClosedObjects(p)
		}
	}
	stripClosedObjects(s["items"])
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func cloneJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out any
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

// writeGolden rewrites the response of a generated golden file.
func writeGolden(t *testing.T, path string, g goldenFile, status int, header http.Header, body map[string]any) {
	t.Helper()
	require.False(t, g.fromSeed(), "seed files are never rewritten")
	g.Response.Status = status
	for k := range g.Response.Headers {
		g.Response.Headers[k] = header.Get(k)
	}
	b, err := json.Marshal(body)
	require.NoError(t, err)
	g.Response.Body = b

	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	require.NoError(t, enc.Encode(g))
	require.NoError(t, os.WriteFile(path, out.Bytes(), 0o644))
}

// startMain runs the program in a child process (this test binary, told by
// mainArgsEnv to run main) with the given arguments, and returns its
// stderr lines as they come.
func startMain(t *testing.T, args string) (*exec.Cmd, <-chan string) {
	t.Helper()
	return startMainEnv(t, args)
}

// startMainEnv is startMain with more environment variables ("K=V"). The
// child gets none of this process's OTC_ variables, so that it runs
// without authentication unless env says otherwise.
func startMainEnv(t *testing.T, args string, env ...string) (*exec.Cmd, <-chan string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0])
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTC_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.Env = append(cmd.Env, mainArgsEnv+"="+args)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return cmd, lines
}

// nextLine waits for the child's next stderr line. The timeout only keeps
// a broken program from hanging the test; a working one answers at once.
func nextLine(t *testing.T, lines <-chan string) string {
	t.Helper()
	select {
	case l, ok := <-lines:
		require.True(t, ok, "the program closed stderr without logging")
		return l
	case <-time.After(time.Minute):
		t.Fatal("the program logged nothing within a minute")
		return ""
	}
}

// listeningURL checks that line is the program's first, saying where it
// listens, and returns that URL.
func listeningURL(t *testing.T, line string) string {
	t.Helper()
	require.Contains(t, line, `msg="calculator: serving OTC tools"`)
	m := regexp.MustCompile(`\burl=(http://127\.0\.0\.1:(\d+))(\s|$)`).FindStringSubmatch(line)
	require.NotNil(t, m, "the line must give the URL it listens on: %s", line)
	require.NotEqual(t, "0", m[2], "the logged port must be the one chosen, not 0")
	return m[1]
}

// TestMain_ServesOnAddr starts the program with -addr 127.0.0.1:0 and
// checks that it logs exactly one line, at info level, with the URL it
// listens on, and that the tools are served there.
func TestMain_ServesOnAddr(t *testing.T) {
	t.Parallel()
	cmd, lines := startMain(t, "-addr 127.0.0.1:0")
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	line := nextLine(t, lines)
	assert.Contains(t, line, "level=INFO")
	assert.Contains(t, line, "auth=none", "without OTC_API_KEY or OTC_JWT_SECRET, authentication is off")
	base := listeningURL(t, line)

	for _, tc := range []struct {
		path  string
		tools int
	}{{"/health", 0}, {"/tools", 8}} { // Payments.Refund needs a token: a caller without one does not see it
		resp, err := http.Get(base + tc.path)
		require.NoError(t, err)
		var body struct {
			Schema string `json:"$schema"`
			Tools  []any  `json:"tools"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, resp.StatusCode, tc.path)
		assert.Equal(t, "otc://1.0", body.Schema, tc.path)
		assert.Len(t, body.Tools, tc.tools, tc.path)
	}

	// Requests are not logged: the listening line stays the only one.
	// Everything the program wrote is read before Wait closes the pipe.
	require.NoError(t, cmd.Process.Kill())
	var rest []string
	for l := range lines {
		rest = append(rest, l)
	}
	_ = cmd.Wait()
	assert.Empty(t, rest, "lines logged after the listening line")
}

// TestMain_BadAddr checks that the program exits 1 with one error line when
// it cannot listen.
func TestMain_BadAddr(t *testing.T) {
	t.Parallel()
	cmd, lines := startMain(t, "-addr 127.0.0.1:no-such-port")
	var logged []string
	for l := range lines {
		logged = append(logged, l)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 1, exit.ExitCode())
	require.Len(t, logged, 1, "stderr: %q", logged)
	assert.Contains(t, logged[0], "level=ERROR")
	assert.Contains(t, logged[0], "calculator: ")
	assert.Contains(t, logged[0], "no-such-port")
}

// TestRun_ListenErrors checks that run returns, rather than serves, when it
// cannot listen.
func TestRun_ListenErrors(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { taken.Close() })

	for _, tc := range []struct{ name, addr string }{
		{"bad_port", "127.0.0.1:no-such-port"},
		{"port_in_use", taken.Addr().String()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			err := run(t.Context(), config{addr: tc.addr}, slog.New(slog.NewTextHandler(&logs, nil)))
			var opErr *net.OpError
			assert.True(t, errors.As(err, &opErr), "want a *net.OpError, got %v", err)
			assert.Empty(t, logs.String(), "nothing is logged when listening fails: run's caller reports the error")
		})
	}
}
