package otc_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The package graph of docs/architecture.md, checked: every Go file of the
// repository (nested modules included) is read, and the imports of each
// package, without and with its tests, are held to the rules the guide
// states. A new import that breaks the picture fails here, naming it.

const modulePath = "github.com/otcgo/otc"

// The public wire formats other than OTC, built on the root's exported API.
var wireFormats = []string{"rest", "registryview", "mcp", "a2a"}

// The packages that, like the wire formats, are built on the root's
// exported API and import only it, internal/ and caller: the
// authenticators, the OAuth resource server, the task storage, the rate
// limits, the search of a catalog, and caller itself, which says who a
// caller is for everything that keeps or counts things per caller.
var builtOnRoot = []string{"auth", "oauth", "tasks", "ratelimit", "caller", "idempotency", "calllog", "search"}

// The packages a wire format may import beside the root and internal/:
// the storage that the wire formats with tasks share (MCP and A2A), who a
// caller is, and the search of a catalog (MCP's search mode).
var sharedByFormats = []string{"tasks", "caller", "search"}

// The packages under internal/ that may import the root, because only
// tests and documentation use them.
var testOnly = []string{"internal/testkit", "internal/docs"}

// The machinery under internal/ that the wire formats with tasks share,
// built on the root's API and the task storage: the task runner (one
// starter, one set of rules, for MCP and A2A).
var sharedMachinery = []string{"internal/taskrun"}

// The wire vocabularies under internal/ that a server wire format and the
// client both compile against: they import the root (for its types) and
// internal/wire (its string writer) at most.
var wireVocabularies = []string{"internal/mcpwire", "internal/a2awire", "internal/jsonrpc"}

// The server-side packages the client never depends on, even through
// another package.
var serverSide = []string{"mcp", "a2a", "rest", "registryview", "tasks", "internal/taskrun", "caller"}

// repoImports returns, for each package of the repository by its path
// relative to the root ("" for the root package, "rest", "internal/wire"),
// the repository packages its non-test files import, and those its test
// files import.
func repoImports(t *testing.T) (code, tests map[string][]string) {
	t.Helper()
	code, tests = map[string][]string{}, map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		if pkg == "." {
			pkg = ""
		}
		into := code
		if strings.HasSuffix(path, "_test.go") {
			into = tests
		}
		if _, ok := into[pkg]; !ok {
			into[pkg] = nil
		}
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			require.NoError(t, err)
			rel, ok := strings.CutPrefix(p, modulePath)
			if !ok || rel != "" && rel[0] != '/' {
				continue
			}
			rel = strings.TrimPrefix(rel, "/")
			if !slices.Contains(into[pkg], rel) {
				into[pkg] = append(into[pkg], rel)
			}
		}
		return nil
	})
	require.NoError(t, err)
	for _, m := range []map[string][]string{code, tests} {
		for _, l := range m {
			sort.Strings(l)
		}
	}
	return code, tests
}

// display names a package of the repository in a message.
func display(p string) string {
	if p == "" {
		return "the root package"
	}
	return p
}

func isInternal(p string) bool { return p == "internal" || strings.HasPrefix(p, "internal/") }

func under(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

func isTestOnly(p string) bool {
	return slices.ContainsFunc(testOnly, func(dir string) bool { return under(p, dir) })
}

// TestArchitecture holds the imports of every package to the rules of
// docs/architecture.md.
func TestArchitecture(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("go.work"); err != nil {
		t.Fatalf("run from the repository's root: %v", err)
	}
	code, tests := repoImports(t)
	require.Contains(t, code, "", "the root package was read")
	for _, w := range append(slices.Clone(wireFormats), builtOnRoot...) {
		require.Contains(t, code, w, "package %s was read", w)
	}

	for pkg, imports := range code {
		name := display(pkg)
		for _, imp := range imports {
			switch {
			case isTestOnly(imp) && !isTestOnly(pkg):
				t.Errorf("%s imports %s, which only tests and documentation may use", name, display(imp))
			case pkg == "" && !isInternal(imp):
				t.Errorf("the root package imports %s: it may import only packages under internal/", imp)
			case slices.Contains(wireFormats, pkg) && imp != "" && !isInternal(imp) && !slices.Contains(sharedByFormats, imp):
				t.Errorf("%s imports %s: a wire-format package imports only the root, internal/ and %s", pkg, imp, strings.Join(sharedByFormats, ", "))
			case slices.Contains(builtOnRoot, pkg) && imp != "" && !isInternal(imp) && imp != "caller":
				t.Errorf("%s imports %s: it is built on the root's API, and imports only the root, internal/ and caller", pkg, imp)
			case pkg == "mount" && imp != "" && imp != "caller" && imp != "search" && !slices.Contains(wireFormats, imp) && !isInternal(imp):
				t.Errorf("mount imports %s: it puts the wire formats on one mux, and imports only the root, caller, search and them", imp)
			case pkg == "export" && imp != "" && !isInternal(imp):
				t.Errorf("export imports %s: it prepares a catalog for a model from the root's definitions alone, and imports the root and internal/ only", imp)
			case pkg == "client" && imp != "" && !isInternal(imp):
				t.Errorf("client imports %s: it imports the root and internal/ only (a wire vocabulary it shares with a server lives under internal/)", imp)
			case slices.Contains(wireVocabularies, pkg) && imp != "" && imp != "internal/wire":
				t.Errorf("%s imports %s: a wire vocabulary imports the root and internal/wire only", pkg, display(imp))
			case pkg == "federation" && imp != "" && imp != "client" && !isInternal(imp):
				t.Errorf("federation imports %s: a remote tool is a registry entry that calls its server through the client, so it imports the root, client and internal/ only", imp)
			case slices.Contains(sharedMachinery, pkg) && imp != "" && !isInternal(imp) && !slices.Contains(sharedByFormats, imp):
				t.Errorf("%s imports %s: it is built on the root's API, and imports only the root, internal/ and %s", pkg, display(imp), strings.Join(sharedByFormats, ", "))
			case isInternal(pkg) && !isTestOnly(pkg) && !slices.Contains(sharedMachinery, pkg) && !slices.Contains(wireVocabularies, pkg) && !isInternal(imp):
				t.Errorf("%s imports %s: nothing under internal/ imports the root or a public package", pkg, display(imp))
			case slices.Contains(sharedMachinery, imp) && !slices.Contains([]string{"mcp", "a2a"}, pkg) && !slices.Contains(sharedMachinery, pkg):
				t.Errorf("%s imports %s: only the wire formats with tasks use it", name, display(imp))
			}
		}
	}
	// Tests may use the fixtures, but the root's own tests never reach
	// into another wire format's internals either way round: a wire-format
	// package's tests do not import another wire format's package, and
	// the OAuth resource server's tests import none.
	for pkg, imports := range tests {
		if !slices.Contains(wireFormats, pkg) && !slices.Contains(builtOnRoot, pkg) {
			continue
		}
		for _, imp := range imports {
			if imp != pkg && slices.Contains(wireFormats, imp) {
				t.Errorf("the tests of %s import %s: each wire format is tested on its own (cross-format tests live in the root package)", pkg, imp)
			}
		}
	}

	// The picture itself: the imports the guide draws are there, so that
	// the rules above are not met by reading nothing.
	assert.Subset(t, code[""], []string{"internal/jsonparse", "internal/validate", "internal/decode", "internal/envelope", "internal/wire", "internal/viewcache"})
	assert.Subset(t, code["rest"], []string{"", "internal/callin", "internal/envelope", "internal/jsonparse", "internal/wire", "internal/viewcache"})
	assert.Subset(t, code["mcp"], []string{"", "internal/jsonparse", "internal/wire", "internal/viewcache", "tasks", "internal/taskrun"})
	assert.Subset(t, code["a2a"], []string{"tasks", "internal/taskrun"})
	assert.Subset(t, code["internal/taskrun"], []string{"", "tasks", "internal/callin"})
	assert.Subset(t, code["caller"], []string{"", "internal/claims"})
	assert.Subset(t, code["ratelimit"], []string{"", "caller"})
	assert.Subset(t, code["a2a"], []string{"", "internal/modeltext", "internal/wire"})
	assert.Subset(t, code["registryview"], []string{"", "internal/wire", "internal/viewcache"})
	assert.Subset(t, code["oauth"], []string{"", "internal/authin", "internal/jwks", "internal/wire"})
	assert.Subset(t, code["mount"], append([]string{""}, wireFormats...))
	assert.Subset(t, code["federation"], []string{"", "client"})
	assert.Subset(t, code["mcp"], []string{"internal/mcpwire"})
	assert.Subset(t, code["client"], []string{"", "internal/mcpwire", "internal/a2awire", "internal/jsonrpc"})
	assert.Subset(t, code["a2a"], []string{"internal/a2awire", "internal/jsonrpc"})
	assert.Subset(t, code["mcp"], []string{"internal/jsonrpc"})
	assert.Subset(t, code["export"], []string{"", "internal/mcpwire", "internal/modeltext"})
	assert.Subset(t, code["auth"], []string{"", "internal/authin", "internal/claims", "internal/jwks", "internal/wire"})
	assert.Empty(t, code["internal/jsonparse"], "the JSON reader imports nothing of the module")
}

// TestClientDependsOnNoServer: the client builds without any server-side
// package, even through another one (go list -deps), so that a program
// that only calls tools does not compile a server.
func TestClientDependsOnNoServer(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "./client").Output()
	require.NoError(t, err)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, modulePath+"/client", "the list was read")
	for _, p := range serverSide {
		assert.NotContains(t, deps, modulePath+"/"+p, "the client depends on %s", p)
	}
}

// maxRootLines bounds the root package: the API a tool author imports and
// the OTC/OXP handler. Authenticators, storage and converters live in
// packages of their own; a root that grows past the bound is taking in
// something that belongs in one.
const maxRootLines = 8000

// maxRootEntries bounds the root package's exported API, in go doc -short
// entries.
const maxRootEntries = 110

// TestRootSize counts the lines of the root package's non-test Go files,
// and the entries of its exported API.
func TestRootSize(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	lines := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		lines += strings.Count(string(b), "\n")
	}
	require.Greater(t, lines, 1000, "the root package was read")
	assert.LessOrEqual(t, lines, maxRootLines, "the root package has %d lines of non-test Go; move what a tool author does not need into a package of its own", lines)

	// The exported API, as go doc -short lists it: one line per name (a
	// constant or variable group is one).
	out, err := exec.Command("go", "doc", "-short", ".").Output()
	require.NoError(t, err, "go doc -short .")
	entries := strings.Count(strings.TrimSpace(string(out)), "\n") + 1
	require.Greater(t, entries, 50, "go doc listed the root package")
	assert.LessOrEqual(t, entries, maxRootEntries, "the root package exports %d go doc -short entries; a tool author needs registering, calling, the context accessors and asking: move the rest into a package of its own", entries)
}

// TestJSONRPCEnvelopeOnce: the JSON-RPC envelope is written in one
// package, internal/jsonrpc, which the MCP and A2A servers, the client
// and the command all build on: no other code of the module spells it
// out, in JSON text or a Go literal. (Tests, examples and fixtures, which
// send hand-written messages on purpose, may.)
func TestJSONRPCEnvelopeOnce(t *testing.T) {
	var found []string
	read := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch path {
			case ".git", "examples", "internal/jsonrpc", "internal/testkit", "internal/docs", "benchmarks", "interop", "inspecttest":
				return filepath.SkipDir
			}
			if d.Name() == "node_modules" || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		read++
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue
			}
			if strings.Contains(line, `{"jsonrpc"`) {
				found = append(found, path+":"+strconv.Itoa(i+1))
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, read, 100, "the module's files were read")
	assert.Empty(t, found, "a JSON-RPC envelope written outside internal/jsonrpc")
}

// TestClientBranchesOnVersionValues: the client names no protocol version
// of MCP or A2A in its code; it branches on the per-version values of
// internal/mcpwire and internal/a2awire (mcpwire.Version,
// a2awire.Version), as the servers do, so that a version is added in one
// place.
func TestClientBranchesOnVersionValues(t *testing.T) {
	files, err := filepath.Glob("client/*.go")
	require.NoError(t, err)
	versionName := regexp.MustCompile(`mcpwire\.V20\d{6}|a2awire\.V(03|10)\b|"20\d\d-\d\d-\d\d"|\bv03\b`)
	var found []string
	read := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		read++
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue
			}
			if m := versionName.FindString(line); m != "" {
				found = append(found, path+":"+strconv.Itoa(i+1)+": "+m)
			}
		}
	}
	require.Greater(t, read, 20, "the client's files were read")
	assert.Empty(t, found, "a protocol version named in the client's code, not through its per-version value")
}
