package search_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/ratelimit"
	"github.com/otcgo/otc/search"
)

// register adds tool, of input In, with a function that is searched for,
// never called.
func register[In any](t testing.TB, reg *otc.Registry, tool otc.Tool) {
	t.Helper()
	require.NoError(t, otc.Register(reg, tool, func(context.Context, In) (string, error) { return "", nil }))
}

// catalog registers tools as a few real servers publish them.
func catalog(t testing.TB) *otc.Registry {
	t.Helper()
	reg := otc.NewRegistry(nil)
	type file struct {
		Path string `json:"path" jsonschema:"description=The path of the file."`
	}
	type write struct {
		Path    string `json:"path" jsonschema:"description=The path of the file."`
		Content string `json:"content" jsonschema:"description=What to write into it."`
	}
	type repo struct {
		Owner string `json:"owner" jsonschema:"description=The repository's owner."`
		Repo  string `json:"repo" jsonschema:"description=The repository's name."`
	}
	type numbers struct {
		A float64 `json:"a" jsonschema:"description=The first number."`
		B float64 `json:"b" jsonschema:"description=The second number."`
	}
	type city struct {
		City string `json:"city" jsonschema:"description=The city to forecast."`
	}
	register[file](t, reg, otc.Tool{ID: "Files.read_file", Version: "1.0.0", Description: "Read the complete contents of a file from the file system."})
	register[write](t, reg, otc.Tool{ID: "Files.write_file", Version: "1.0.0", Description: "Create a new file or overwrite an existing file with new content."})
	register[file](t, reg, otc.Tool{ID: "Files.list_directory", Version: "1.0.0", Description: "Get a detailed listing of all files and directories in a specified path."})
	register[repo](t, reg, otc.Tool{ID: "GitHub.list_issues", Version: "1.0.0", Description: "List issues in a GitHub repository, with filtering options."})
	register[repo](t, reg, otc.Tool{ID: "GitHub.create_pull_request", Version: "1.0.0", Description: "Create a new pull request in a GitHub repository."})
	register[numbers](t, reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers together."})
	register[city](t, reg, otc.Tool{ID: "Weather.getForecast", Version: "1.0.0", Title: "Weather forecast", Description: "The forecast for the days to come."})
	return reg
}

func names(rs []search.Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Tool.Name
	}
	return out
}

func TestToolsFindsTheToolAsked(t *testing.T) {
	t.Parallel()
	reg := catalog(t)
	for query, want := range map[string]string{
		"read a file":                                        "Files_read_file",
		"show me what is in the file notes.txt":              "Files_read_file",
		"save some text to a file":                           "Files_write_file",
		"which files are in this folder? list the directory": "Files_list_directory",
		"list the open issues of a repository":               "GitHub_list_issues",
		"open a pull request":                                "GitHub_create_pull_request",
		"add two numbers":                                    "Calculator_Add",
		"what is the weather forecast for Paris":             "Weather_getForecast",
		"get forecast":                                       "Weather_getForecast", // getForecast split at its case
		"READ_FILE":                                          "Files_read_file",
	} {
		found, err := search.Tools(context.Background(), reg, query, nil)
		require.NoError(t, err, query)
		require.NotEmpty(t, found, query)
		assert.Equal(t, want, found[0].Tool.Name, "%q found %v", query, names(found))
		again, err := search.Tools(context.Background(), reg, query, nil)
		require.NoError(t, err)
		assert.Equal(t, found, again, "the same search, the same answer")
	}
	found, err := search.Tools(context.Background(), reg, "file", &search.Options{Limit: 2})
	require.NoError(t, err)
	assert.Len(t, found, 2, "at most the limit")
	for _, q := range []string{"", "   ", "the of a to", "?!#", "zzyzx"} {
		found, err := search.Tools(context.Background(), reg, q, nil)
		require.NoError(t, err, q)
		assert.Empty(t, found, "%q finds nothing", q)
	}
}

// TestToolsFollowsTheRegistry: a tool registered is found by the next
// search, a tool removed is not, without rebuilding what did not change.
func TestToolsFollowsTheRegistry(t *testing.T) {
	t.Parallel()
	reg := catalog(t)
	ctx := context.Background()
	found, err := search.Tools(ctx, reg, "translate into french", nil)
	require.NoError(t, err)
	assert.Empty(t, found)
	register[struct{}](t, reg, otc.Tool{ID: "Lang.translate", Version: "1.0.0", Description: "Translate text into another language."})
	found, err = search.Tools(ctx, reg, "translate into french", nil)
	require.NoError(t, err)
	require.NotEmpty(t, found)
	assert.Equal(t, "Lang_translate", found[0].Tool.Name)

	// A second version: one result for the tool, the higher version.
	register[struct{}](t, reg, otc.Tool{ID: "Lang.translate", Version: "2.0.0", Description: "Translate text into another language."})
	found, err = search.Tools(ctx, reg, "translate into french", nil)
	require.NoError(t, err)
	require.Len(t, found, 1)
	assert.Equal(t, "Lang.translate@2.0.0", found[0].Tool.ID)

	assert.Equal(t, 2, reg.Remove("Lang.translate"))
	found, err = search.Tools(ctx, reg, "translate into french", nil)
	require.NoError(t, err)
	assert.Empty(t, found)
}

// TestToolsSeesWhatTheCallerSees: search never reveals a tool its caller
// could not list.
func TestToolsSeesWhatTheCallerSees(t *testing.T) {
	t.Parallel()
	reg := catalog(t)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Admin.delete_file", Version: "1.0.0", Description: "Delete a file for good.",
		Policy: &otc.Policy{RequiredScopes: []string{"files:admin"}}}, func(context.Context, struct{}) (string, error) { return "", nil }))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Files.stat_file", Version: "1.0.0", Description: "Tell a file's size; over OTC only.",
		Policy: &otc.Policy{Protocols: []string{otc.ProtocolOTC}}}, func(context.Context, struct{}) (string, error) { return "", nil }))
	admin := otc.WithIdentity(context.Background(), &otc.Identity{Method: testkit.MethodOAuth, Claims: map[string]any{"scope": "files:admin"}})

	found, err := search.Tools(context.Background(), reg, "delete a file", nil)
	require.NoError(t, err)
	assert.NotContains(t, names(found), "Admin_delete_file", "a caller without the scope")
	found, err = search.Tools(admin, reg, "delete a file", nil)
	require.NoError(t, err)
	assert.Equal(t, "Admin_delete_file", found[0].Tool.Name, "a caller with it")

	found, err = search.Tools(context.Background(), reg, "file size", &search.Options{Protocol: otc.ProtocolMCP})
	require.NoError(t, err)
	assert.NotContains(t, names(found), "Files_stat_file", "over a protocol its policy leaves out")
	found, err = search.Tools(context.Background(), reg, "file size", &search.Options{Protocol: otc.ProtocolOTC})
	require.NoError(t, err)
	assert.Contains(t, names(found), "Files_stat_file")
}

func TestToolsRefusesWhatItCannotSearch(t *testing.T) {
	t.Parallel()
	reg := catalog(t)
	for name, tc := range map[string]struct {
		query string
		limit int
		param string
	}{
		"a query of 1 MB":    {strings.Repeat("file ", 200_000), 0, "q"},
		"just over the most": {strings.Repeat("a", search.MaxQueryBytes+1), 0, "q"},
		"not UTF-8":          {"read \xff file", 0, "q"},
		"a negative limit":   {"file", -1, "limit"},
		"a huge limit":       {"file", 1_000_000_000, "limit"},
		"over the most":      {"file", search.MaxLimit + 1, "limit"},
	} {
		_, err := search.Tools(context.Background(), reg, tc.query, &search.Options{Limit: tc.limit})
		var oe *otc.Error
		require.ErrorAs(t, err, &oe, name)
		assert.Equal(t, otc.CodeInvalidInput, oe.Code, name)
		assert.Contains(t, oe.ParameterErrors, tc.param, name)
	}
	// Control characters and a pattern that would be a regular
	// expression's bomb are words and separators like any others.
	for _, q := range []string{"read\x00\x01\x1b[31mfile\r\n", "(a+)+$ read file", strings.Repeat("(a|a)*", 100)} {
		_, err := search.Tools(context.Background(), reg, q, nil)
		assert.NoError(t, err, "%q", q)
	}
	found, err := search.Tools(context.Background(), reg, "read\x00file", nil)
	require.NoError(t, err)
	require.NotEmpty(t, found)
	assert.Equal(t, "Files_read_file", found[0].Tool.Name)
}

// TestSearchOverOTC: GET /tools?q=…&limit=… of the OTC handler, over
// HTTP.
func TestSearchOverOTC(t *testing.T) {
	t.Parallel()
	reg := catalog(t)
	srv := httptest.NewServer(otc.NewHandler(reg, &otc.HandlerOptions{Search: search.Query}))
	t.Cleanup(srv.Close)
	get := func(query string) (int, map[string]any) {
		resp, err := http.Get(srv.URL + "/tools" + query)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		var body map[string]any
		require.NoError(t, json.Unmarshal(b, &body), "%s", b)
		return resp.StatusCode, body
	}
	ids := func(body map[string]any) []string {
		var out []string
		for _, tl := range body["tools"].([]any) {
			out = append(out, tl.(map[string]any)["id"].(string))
		}
		return out
	}
	status, body := get("?q=" + url.QueryEscape("read a file"))
	require.Equal(t, http.StatusOK, status, "%v", body)
	assert.Equal(t, "Files.read_file@1.0.0", ids(body)[0])
	assert.Contains(t, body["tools"].([]any)[0].(map[string]any), "input_schema", "each tool as the catalog lists it")

	status, body = get("?q=file&limit=1")
	require.Equal(t, http.StatusOK, status)
	assert.Len(t, ids(body), 1)

	status, body = get("")
	require.Equal(t, http.StatusOK, status)
	assert.Len(t, ids(body), 7, "without q, the whole catalog")

	status, body = get("?q=zzyzx")
	require.Equal(t, http.StatusOK, status)
	assert.Empty(t, body["tools"], "nothing found is an empty list")

	for _, bad := range []string{"?q=file&limit=0", "?q=file&limit=-1", "?q=file&limit=1000000000", "?q=file&limit=ten",
		"?q=" + strings.Repeat("a", search.MaxQueryBytes+1), "?q=%ff"} {
		status, body = get(bad)
		assert.Equal(t, http.StatusUnprocessableEntity, status, "%s: %v", bad, body) // OTC's invalid input
		assert.NotEmpty(t, body["parameter_errors"], bad)
	}
}

func BenchmarkTools(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		reg := otc.NewRegistry(nil)
		words := strings.Fields("read write list create delete update search get send file issue repository message channel user page database table query image")
		for i := range n {
			w1, w2, w3 := words[i%len(words)], words[(i/len(words))%len(words)], words[(i/7)%len(words)]
			require.NoError(b, otc.Register(reg, otc.Tool{ID: fmt.Sprintf("T%d.%s_%s", i, w1, w2), Version: "1.0.0",
				Description: fmt.Sprintf("Does %s with a %s and a %s.", w1, w2, w3)},
				func(context.Context, struct{}) (string, error) { return "", nil }))
		}
		ctx := context.Background()
		_, err := search.Tools(ctx, reg, "warm", nil)
		require.NoError(b, err)
		b.Run(fmt.Sprintf("search/tools=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := search.Tools(ctx, reg, "create an issue in the repository", nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		// A registration and removal alone, beside the same followed by a
		// search (which indexes the change): the index's own cost is the
		// difference.
		b.Run(fmt.Sprintf("register/tools=%d", n), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				id := fmt.Sprintf("New.tool_%d", i)
				require.NoError(b, otc.Register(reg, otc.Tool{ID: id, Version: "1.0.0", Description: "A tool just added to the catalog."},
					func(context.Context, struct{}) (string, error) { return "", nil }))
				reg.Remove(id)
			}
		})
		_, err = search.Tools(ctx, reg, "warm", nil)
		require.NoError(b, err)
		b.Run(fmt.Sprintf("update/tools=%d", n), func(b *testing.B) { benchUpdate(b, reg) })
	}
}

// FuzzTools searches a small catalog with any query: an answer within
// the limit, or the refusal of a query it cannot take, never a panic.
func FuzzTools(f *testing.F) {
	reg := catalog(f)
	for _, s := range []string{"read a file", "", "\x00", "(a+)+$", "\xff", strings.Repeat("file ", 300)} {
		f.Add(s, 5)
	}
	f.Fuzz(func(t *testing.T, q string, limit int) {
		found, err := search.Tools(context.Background(), reg, q, &search.Options{Limit: limit})
		if err != nil {
			var oe *otc.Error
			if !errors.As(err, &oe) || oe.Code != otc.CodeInvalidInput {
				t.Fatalf("Tools(%q, %d): %v", q, limit, err)
			}
			return
		}
		want := limit
		if want == 0 {
			want = search.DefaultLimit
		}
		if len(found) > want {
			t.Fatalf("Tools(%q, %d) found %d", q, limit, len(found))
		}
	})
}

// TestClientSearchesOverOTC: otc's client asks a server's search, with
// its limit; a format it cannot search is refused with ErrNoSearch.
func TestClientSearchesOverOTC(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(otc.NewHandler(catalog(t), &otc.HandlerOptions{Search: search.Query}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, nil)
	require.NoError(t, err)
	found, err := c.SearchTools(context.Background(), "list the open issues of a repository", 2)
	require.NoError(t, err)
	require.Len(t, found, 2)
	assert.Equal(t, "GitHub.list_issues@1.0.0", found[0].ID)
	_, err = c.SearchTools(context.Background(), "file", 1000)
	var oe *otc.Error
	require.ErrorAs(t, err, &oe, "a limit the server refuses")
	assert.Equal(t, otc.CodeInvalidInput, oe.Code)
	assert.Contains(t, oe.ParameterErrors, "limit")

	r, err := client.New(srv.URL+"/v1", &client.Options{Format: client.FormatREST})
	require.NoError(t, err)
	_, err = r.SearchTools(context.Background(), "file", 0)
	assert.ErrorIs(t, err, client.ErrNoSearch)
}

// BenchmarkToolsWithPolicies: a search of 10,000 tools as a caller with
// an identity and scopes makes it, where a tool in every four needs a
// scope (of twenty, so that callers see different sets; distinct=true:
// of its own, 2,500 policies in all): beside the
// anonymous search of the same catalog (anonymous/), what a caller's
// visibility adds.
func BenchmarkToolsWithPolicies(b *testing.B) {
	for _, distinct := range []bool{false, true} {
		b.Run(fmt.Sprintf("distinct=%v", distinct), func(b *testing.B) { benchPolicies(b, distinct) })
	}
}

// benchPolicies is BenchmarkToolsWithPolicies's catalog: with distinct,
// each tool of the four needs a scope of its own.
func benchPolicies(b *testing.B, distinct bool) {
	const n = 10_000
	reg := otc.NewRegistry(nil)
	words := strings.Fields("read write list create delete update search get send file issue repository message channel user page database table query image")
	for i := range n {
		w1, w2, w3 := words[i%len(words)], words[(i/len(words))%len(words)], words[(i/7)%len(words)]
		var p *otc.Policy
		if i%4 == 0 {
			p = &otc.Policy{RequiredScopes: []string{fmt.Sprintf("scope%d", i%20)}}
		}
		if distinct {
			p = &otc.Policy{RequiredScopes: []string{fmt.Sprintf("scope%d", i)}}
		}
		require.NoError(b, otc.Register(reg, otc.Tool{ID: fmt.Sprintf("T%d.%s_%s", i, w1, w2), Version: "1.0.0", Policy: p,
			Description: fmt.Sprintf("Does %s with a %s and a %s.", w1, w2, w3)},
			func(context.Context, struct{}) (string, error) { return "", nil }))
	}
	anon := context.Background()
	who := otc.WithIdentity(anon, &otc.Identity{Method: "oauth", Name: "alice", Claims: map[string]any{"sub": "alice", "scope": "scope0 scope4 scope8"}})
	for name, ctx := range map[string]context.Context{"anonymous": anon, "identity": who} {
		_, err := search.Tools(ctx, reg, "warm", nil)
		require.NoError(b, err)
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := search.Tools(ctx, reg, "create an issue in the repository", nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSearchChargedByWork: a caller's budget is charged by what its
// searches cost, not only counted: over OTC, one that asks for every
// word of a 2,000-tool catalog (each search reads some 40,000 postings,
// four ordinary searches) is refused after a handful, where one that
// asks for one rare word makes its whole burst.
func TestSearchChargedByWork(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	words := strings.Fields("read write list create delete update search get send file issue repository message channel user page database table query image")
	for i := range 2000 {
		require.NoError(t, otc.Register(reg, otc.Tool{ID: fmt.Sprintf("T%d.tool", i), Version: "1.0.0",
			Description: "Does " + strings.Join(words, " ") + "."}, func(context.Context, struct{}) (string, error) { return "", nil }))
	}
	srv := httptest.NewServer(otc.NewHandler(reg, &otc.HandlerOptions{Search: search.Query}))
	t.Cleanup(srv.Close)
	admitted := func(from, query string) int {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		c := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
		for n := range search.CallerBurst + 1 {
			resp, err := c.Get(srv.URL + "/tools?q=" + url.QueryEscape(query))
			require.NoError(t, err)
			resp.Body.Close()
			if resp.StatusCode == http.StatusTooManyRequests {
				return n
			}
			require.Equal(t, http.StatusOK, resp.StatusCode)
		}
		return search.CallerBurst + 1
	}
	heavy := admitted("127.0.0.2", strings.Join(words, " "))
	light := admitted("127.0.0.3", "T1999")
	assert.Less(t, heavy, search.CallerBurst/3, "searches of every word, each the work of four")
	assert.GreaterOrEqual(t, light, search.CallerBurst, "searches of one word, each ordinary")
}

// TestLinkingTurnsNothingOn: this package is linked into this test, and a
// handler whose options give no Search still answers GET /tools?q= 400:
// search is the program's choice (HandlerOptions.Search, mount.All), not a
// side effect of what it imports.
func TestLinkingTurnsNothingOn(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(otc.NewHandler(catalog(t), nil))
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL + "/tools?q=add")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(b), "does not search its tools")
}

// TestBoundSharedStore: Bound sets a registry's allowance of searches and
// where it is kept; two registries (two replicas) given one store hold
// one caller to one allowance between them, and a store that fails
// refuses the search, or admits it with FailOpen.
func TestBoundSharedStore(t *testing.T) {
	t.Parallel()
	shared := ratelimit.NewMemoryStore(nil)
	var urls []string
	for range 2 {
		reg := catalog(t)
		search.Bound(reg, &search.Bounds{Limit: ratelimit.Limit{Rate: 0.01, Burst: 3}, Store: shared})
		srv := httptest.NewServer(otc.NewHandler(reg, &otc.HandlerOptions{Search: search.Query}))
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL)
	}
	status := func(u string) int {
		resp, err := http.Get(u + "/tools?q=add")
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusOK, status(urls[0]))
	assert.Equal(t, http.StatusOK, status(urls[1]))
	assert.Equal(t, http.StatusOK, status(urls[0]))
	assert.Equal(t, http.StatusTooManyRequests, status(urls[1]), "the fourth search, on either replica, is over the burst of 3")

	for _, failOpen := range []bool{false, true} {
		reg := catalog(t)
		search.Bound(reg, &search.Bounds{Store: brokenStore{}, FailOpen: failOpen})
		srv := httptest.NewServer(otc.NewHandler(reg, &otc.HandlerOptions{Search: search.Query}))
		want := http.StatusServiceUnavailable
		if failOpen {
			want = http.StatusOK
		}
		assert.Equal(t, want, status(srv.URL), "FailOpen %v", failOpen)
		srv.Close()
	}
}

// brokenStore is a ratelimit.Store whose every check fails.
type brokenStore struct{}

func (brokenStore) Take(context.Context, string, ratelimit.Limit) (bool, time.Duration, error) {
	return false, 0, errors.New("the store is down")
}
