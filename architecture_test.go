package otc_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path"
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

// The packages under internal/ that only tests and documentation use.
var testOnly = []string{"internal/testkit", "internal/docs"}

// The server-side packages the client never depends on, even through
// another package.
var serverSide = []string{"mcp", "a2a", "rest", "registryview", "tasks", "internal/taskrun", "caller"}

// A rule says what of the repository a package may import: "" is the
// root package, "internal/" any package under internal/ (but those only
// tests and documentation use), "public" the root and any package outside internal/,
// "any" everything, and another entry that package.
type rule struct {
	may []string
	why string
}

// rules holds a rule for each package of the repository, by its path
// from the root; a path ending in "/..." holds for the folder and every
// package below it, unless a longer path has a rule of its own. A package
// with no rule fails TestArchitecture: a new package is placed in the
// picture (and in docs/architecture.md) when it lands.
var rules = map[string]rule{
	"": {[]string{"internal/"}, "the API and the OTC/OXP handler import only internal/, never a wire format"},

	"rest":         {[]string{"", "internal/"}, "a wire format is built on the root's exported API"},
	"registryview": {[]string{"", "internal/"}, "a wire format is built on the root's exported API"},
	"mcp":          {[]string{"", "internal/", "tasks", "caller", "search", "sessions"}, "a wire format imports the root, internal/, the task and session storage, caller and search it shares with others"},
	"a2a":          {[]string{"", "internal/", "tasks", "caller", "search"}, "a wire format imports the root, internal/, and the task storage, caller and search it shares with others"},

	"auth":               {[]string{"", "internal/"}, "built on the root's API"},
	"oauth":              {[]string{"", "internal/"}, "built on the root's API"},
	"tasks":              {[]string{"", "internal/"}, "the task storage: its own types, which the root's API does not need"},
	"sessions":           {nil, "the session storage: its own types, which nothing of the module needs"},
	"sessions/storetest": {[]string{"sessions"}, "the contract every session store is tested against"},
	"caller":             {[]string{"", "internal/"}, "built on the root's API"},
	"idempotency":        {[]string{"", "internal/"}, "built on the root's API"},
	"calllog":            {[]string{"", "internal/"}, "built on the root's API"},
	"ratelimit":          {[]string{"", "internal/", "caller"}, "built on the root's API and caller"},
	"search":             {[]string{"", "internal/", "caller", "ratelimit"}, "built on the root's API; meters callers with ratelimit"},
	"resource":           {[]string{"", "internal/"}, "a primitive on the registry, built on the root's API"},
	"prompt":             {[]string{"", "internal/"}, "a primitive on the registry, built on the root's API"},
	"skill":              {[]string{"", "internal/"}, "a primitive on the registry, built on the root's API"},
	"export":             {[]string{"", "internal/"}, "prepares a catalog for a model from the root's definitions alone"},
	"client":             {[]string{"", "internal/"}, "the client imports the root and internal/ only (a vocabulary it shares with a server lives under internal/)"},
	"federation":         {[]string{"", "internal/", "client", "search", "skill"}, "a remote tool is a registry entry that calls its server through the client (and a gateway's file names its search mode, search.Mode)"},
	"mount":              {[]string{"", "internal/", "caller", "search", "rest", "registryview", "mcp", "a2a"}, "puts the wire formats on one mux"},
	"cmd/otc/...":        {[]string{"public", "internal/"}, "the command is built on the public packages"},
	"examples/...":       {[]string{"public", "internal/"}, "programs built on the public packages"},

	"internal/...":       {[]string{"internal/"}, "machinery imports nothing of the root or a public package"},
	"internal/taskrun":   {[]string{"", "internal/", "tasks"}, "the task runner of MCP and A2A, built on the root's API and tasks"},
	"internal/primitive": {[]string{"", "internal/"}, "the registry entries of resources, templates and prompts, built on the root's API"},
	"internal/mcpwire":   {[]string{"", "internal/wire"}, "a wire vocabulary imports the root and internal/wire at most"},
	"internal/a2awire":   {[]string{"", "internal/wire"}, "a wire vocabulary imports the root and internal/wire at most"},
	"internal/jsonrpc":   {[]string{"", "internal/wire", "internal/jsonparse"}, "the JSON-RPC envelope, written and read, imports the root, internal/wire and the JSON reader at most"},
	"internal/jsonparse": {nil, "the JSON reader imports nothing of the module"},
	"internal/testkit":   {[]string{"any"}, "fixtures that only tests use"},
	"internal/docs/...":  {[]string{"any"}, "the guides' sources and examples"},

	"otel":            {[]string{"", "internal/"}, "a nested module on the root's API"},
	"redisstore":      {[]string{"", "internal/", "ratelimit", "tasks", "sessions", "sessions/storetest"}, "a nested module: the stores of the root, ratelimit, tasks and sessions in Redis"},
	"mcpsdk":          {[]string{"", "mcp"}, "a nested module: the bridge to the official MCP SDK"},
	"adapters/...":    {[]string{"", "client", "export"}, "nested modules: a remote server's tools as an agent framework's"},
	"interop/...":     {[]string{"any"}, "tests against other implementations"},
	"benchmarks/...":  {[]string{"any"}, "benchmarks against other implementations"},
	"inspecttest/...": {[]string{"any"}, "the browser tests of otc inspect"},
}

// ruleFor returns the rule of package pkg and the key it was found by.
func ruleFor(pkg string) (rule, string, bool) {
	if r, ok := rules[pkg]; ok {
		return r, pkg, true
	}
	for p := pkg; p != "" && p != "."; p = path.Dir(p) {
		if r, ok := rules[p+"/..."]; ok {
			return r, p + "/...", true
		}
	}
	return rule{}, "", false
}

// allows says whether r lets a package import imp.
func (r rule) allows(imp string) bool {
	for _, m := range r.may {
		switch {
		case m == "any",
			m == "public" && !isInternal(imp),
			m == "internal/" && isInternal(imp),
			m == imp:
			return true
		}
	}
	return false
}

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
	for _, w := range []string{"mcp", "a2a", "rest", "registryview", "auth", "oauth", "tasks", "client", "federation"} {
		require.Contains(t, code, w, "package %s was read", w)
	}

	for pkg, imports := range code {
		name := display(pkg)
		r, key, ok := ruleFor(pkg)
		if !ok {
			t.Errorf("%s has no rule in architecture_test.go: say there what it may import, and name it in docs/architecture.md", name)
			continue
		}
		for _, imp := range imports {
			switch {
			case isTestOnly(imp) && !isTestOnly(pkg) && !r.allows("any"):
				t.Errorf("%s imports %s, which only tests and documentation may use", name, display(imp))
			case !r.allows(imp):
				t.Errorf("%s imports %s: its rule (%s) says %s", name, display(imp), display(key), r.why)
			case imp == "internal/taskrun" && pkg != "mcp" && pkg != "a2a":
				t.Errorf("%s imports internal/taskrun: only the wire formats with tasks use it", name)
			}
		}
	}
	// Tests may use the fixtures, but the root's own tests never reach
	// into another wire format's internals either way round: a wire-format
	// package's tests do not import another wire format's package, and
	// the OAuth resource server's tests import none.
	for pkg, imports := range tests {
		if !slices.Contains(wireFormats, pkg) && !slices.Contains([]string{"auth", "oauth", "tasks", "ratelimit", "caller", "idempotency", "calllog", "search"}, pkg) {
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
	assert.Subset(t, code["rest"], []string{"", "internal/hook", "internal/envelope", "internal/jsonparse", "internal/wire", "internal/viewcache"})
	assert.Subset(t, code["mcp"], []string{"", "internal/jsonparse", "internal/wire", "internal/viewcache", "tasks", "internal/taskrun"})
	assert.Subset(t, code["a2a"], []string{"tasks", "internal/taskrun"})
	assert.Subset(t, code["internal/taskrun"], []string{"", "tasks", "internal/hook"})
	assert.Subset(t, code["caller"], []string{"", "internal/claims"})
	assert.Subset(t, code["ratelimit"], []string{"", "caller"})
	assert.Subset(t, code["a2a"], []string{"", "internal/modeltext", "internal/wire"})
	assert.Subset(t, code["registryview"], []string{"", "internal/wire", "internal/viewcache"})
	assert.Subset(t, code["oauth"], []string{"", "internal/hook", "internal/jwks", "internal/wire"})
	assert.Subset(t, code["mount"], append([]string{""}, wireFormats...))
	assert.Subset(t, code["federation"], []string{"", "client"})
	assert.Subset(t, code["mcp"], []string{"internal/mcpwire"})
	assert.Subset(t, code["client"], []string{"", "internal/mcpwire", "internal/a2awire", "internal/jsonrpc"})
	assert.Subset(t, code["a2a"], []string{"internal/a2awire", "internal/jsonrpc"})
	assert.Subset(t, code["mcp"], []string{"internal/jsonrpc"})
	assert.Subset(t, code["export"], []string{"", "internal/mcpwire", "internal/modeltext"})
	assert.Subset(t, code["auth"], []string{"", "internal/hook", "internal/claims", "internal/jwks", "internal/wire"})
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
	srcs := walkSources(t, func(dir string) bool {
		switch dir {
		case "examples", "internal/jsonrpc", "internal/testkit", "internal/docs", "benchmarks", "interop", "inspecttest":
			return true
		}
		return false
	})
	for _, src := range srcs {
		for i, line := range src.lines {
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue
			}
			if strings.Contains(line, `{"jsonrpc"`) {
				found = append(found, src.path+":"+strconv.Itoa(i+1))
			}
		}
	}
	read := len(srcs)
	require.Greater(t, read, 100, "the module's files were read")
	assert.Empty(t, found, "a JSON-RPC envelope written outside internal/jsonrpc")
}

// TestClientBranchesOnVersionValues: the client names no protocol version
// of MCP or A2A in its code; it branches on the per-version values of
// internal/mcpwire and internal/a2awire (mcpwire.Version,
// a2awire.Version), as the servers do, so that a version is added in one
// place.
func TestClientBranchesOnVersionValues(t *testing.T) {
	versionName := regexp.MustCompile(`mcpwire\.V20\d{6}|a2awire\.V(03|10)\b|"20\d\d-\d\d-\d\d"|\bv03\b`)
	var found []string
	srcs := goSources(t, "client")
	for _, src := range srcs {
		for i, line := range src.lines {
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue
			}
			if m := versionName.FindString(line); m != "" {
				found = append(found, src.path+":"+strconv.Itoa(i+1)+": "+m)
			}
		}
	}
	read := len(srcs)
	require.Greater(t, read, 20, "the client's files were read")
	assert.Empty(t, found, "a protocol version named in the client's code, not through its per-version value")
}

// TestArchitectureGuideNamesEveryPackage: docs/architecture.md names every
// package of the library (the root module's, and the nested modules'
// roots), so that the guide is the map of the whole tree. A package under
// internal/ is named in the guide's list of machinery, or as
// `internal/name`.
func TestArchitectureGuideNamesEveryPackage(t *testing.T) {
	t.Parallel()
	guide, err := os.ReadFile(filepath.Join("docs", "architecture.md"))
	require.NoError(t, err)
	text := string(guide)
	code, _ := repoImports(t)
	checked := 0
	for pkg := range code {
		if pkg == "" {
			continue
		}
		if r, _, _ := ruleFor(pkg); r.allows("any") && !rulesNamed(pkg) {
			continue // tests, benchmarks and the guides' own sources
		}
		if under(pkg, "examples") && pkg != "examples/calculator" && pkg != "examples/deploy" || under(pkg, "cmd/otc") && pkg != "cmd/otc" {
			continue
		}
		checked++
		if strings.Contains(text, "`"+pkg+"`") {
			continue
		}
		if name, ok := strings.CutPrefix(pkg, "internal/"); ok &&
			regexp.MustCompile(`(?m)^ {4,}`+regexp.QuoteMeta(name)+`\s+\S`).MatchString(text) {
			continue
		}
		t.Errorf("docs/architecture.md does not name %s: say what it is and what it imports", pkg)
	}
	require.Greater(t, checked, 40, "the packages were read")
}

// rulesNamed says whether pkg, though its rule lets it import anything, is
// one the guide describes all the same.
func rulesNamed(pkg string) bool {
	return pkg == "internal/testkit" || pkg == "interop" || pkg == "benchmarks" || pkg == "inspecttest"
}

// TestOneSeam: the root lends the packages beside it one typed seam
// (internal/hook's Seam, lent with hook.Lend) and nothing else: its code
// assigns no variable of another package, which would be a back door
// around the seam's types.
func TestOneSeam(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	var found []string
	lends := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		imported := map[string]bool{}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			local := path.Base(p)
			if imp.Name != nil {
				local = imp.Name.Name
			}
			imported[local] = true
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				for _, lhs := range n.Lhs {
					if sel, ok := lhs.(*ast.SelectorExpr); ok {
						if id, ok := sel.X.(*ast.Ident); ok && imported[id.Name] {
							found = append(found, fset.Position(n.Pos()).String()+": "+id.Name+"."+sel.Sel.Name)
						}
					}
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "hook" && sel.Sel.Name == "Lend" {
						lends++
					}
				}
			}
			return true
		})
	}
	assert.Empty(t, found, "the root assigns another package's variable: lend it through hook.Seam instead")
	assert.Equal(t, 1, lends, "the root lends its seam once")
}

// TestMCPVocabularyOnce: MCP's objects (tools, resources, templates,
// prompts, messages, contents, completions, refusals and their codes) are
// spelled in internal/mcpwire (and JSON-RPC's codes in internal/jsonrpc)
// alone: no other code of the packages that write or read them names
// their members or codes in a string, a struct tag or a number. (The A2A
// client's files speak A2A, whose skill extension has an inputSchema too.)
func TestMCPVocabularyOnce(t *testing.T) {
	t.Parallel()
	members := regexp.MustCompile(`"(uriTemplate|mimeType|resourceTemplates|inputSchema|outputSchema|nextCursor|hasMore|ref/prompt|ref/resource|requiredCapabilities)[",]`)
	codes := regexp.MustCompile(`[^0-9]-32(00[0-3]|60[0-3]|700)\b`)
	var found []string
	srcs := goSources(t, "mcp", "resource", "prompt", "client", "federation", "cmd/otc", "export", "search", "internal/primitive")
	for _, src := range srcs {
		a2aClient := strings.HasPrefix(src.path, filepath.Join("client", "a2a"))
		for i, line := range src.lines {
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue
			}
			where := src.path + ":" + strconv.Itoa(i+1)
			if m := members.FindString(line); m != "" && !a2aClient {
				found = append(found, where+": "+m)
			}
			if m := codes.FindString(line); m != "" {
				found = append(found, where+": "+m)
			}
		}
	}
	read := len(srcs)
	require.Greater(t, read, 80, "the packages were read")
	assert.Empty(t, found, "an MCP member or code spelled outside internal/mcpwire and internal/jsonrpc")
}

// maxClientFileLines bounds a file of the client's code: a file that
// grows past it holds two ideas, and is split along them.
const maxClientFileLines = 600

// TestClientFilesSmall holds the client's files under maxClientFileLines.
func TestClientFilesSmall(t *testing.T) {
	t.Parallel()
	srcs := goSources(t, "client")
	for _, src := range srcs {
		lines := len(src.lines) - 1
		assert.LessOrEqual(t, lines, maxClientFileLines, "%s has %d lines: split it along its ideas", src.path, lines)
	}
	read := len(srcs)
	require.Greater(t, read, 20, "the client's files were read")
}

// TestVersionsInTheirLayer: every difference between MCP's versions is
// the server's generation layer's (mcp/generation.go: a generation value
// per request, whose methods the rest of the server asks), or the
// client's per-version value (internal/mcpwire.Version): no other code of
// the server or the client branches on a "modern" flag.
func TestVersionsInTheirLayer(t *testing.T) {
	t.Parallel()
	word := regexp.MustCompile(`\bmodern\b`)
	var found []string
	srcs := goSources(t, "mcp", "client")
	for _, src := range srcs {
		if src.path == filepath.Join("mcp", "generation.go") {
			continue
		}
		for i, line := range src.lines {
			if code, _, _ := strings.Cut(line, "//"); word.MatchString(code) {
				found = append(found, src.path+":"+strconv.Itoa(i+1))
			}
		}
	}
	read := len(srcs)
	require.Greater(t, read, 40, "the server's and the client's files were read")
	assert.Empty(t, found, "a version difference outside the generation layer")
}

// TestOneJSONScanner: the servers' fast paths read JSON with the one
// scanner of internal/jsonparse (jsonparse.Scanner): no other package
// writes a scanner of its own (a type with its own peek and space).
func TestOneJSONScanner(t *testing.T) {
	t.Parallel()
	own := regexp.MustCompile(`^func \(\w+ \*(\w+)\) (peek|space)\(\)`)
	var found []string
	srcs := walkSources(t, func(dir string) bool { return dir == filepath.Join("internal", "jsonparse") })
	for _, src := range srcs {
		methods := map[string]map[string]bool{} // type → its peek and space
		for _, line := range src.lines {
			if m := own.FindStringSubmatch(line); m != nil {
				if methods[m[1]] == nil {
					methods[m[1]] = map[string]bool{}
				}
				methods[m[1]][m[2]] = true
			}
		}
		for typ, ms := range methods {
			if ms["peek"] && ms["space"] {
				found = append(found, src.path+": "+typ)
			}
		}
	}
	read := len(srcs)
	require.Greater(t, read, 100, "the module's files were read")
	assert.Empty(t, found, "a JSON scanner of its own outside internal/jsonparse")
}

// source is a non-test Go file of the module, as its lines.
type source struct {
	path  string
	lines []string
}

// goSources reads the non-test Go files of each of dirs (not below them).
func goSources(t *testing.T, dirs ...string) []source {
	t.Helper()
	var out []source
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			out = append(out, source{path, strings.Split(string(b), "\n")})
		}
	}
	return out
}

// walkSources reads the non-test Go files of the module's tree, leaving
// out .git, node_modules, testdata and the folders skip says.
func walkSources(t *testing.T, skip func(dir string) bool) []source {
	t.Helper()
	var out []source
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "testdata" || skip(path) {
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
		out = append(out, source{path, strings.Split(string(b), "\n")})
		return nil
	})
	require.NoError(t, err)
	return out
}

// TestOneJSONRPCError: the MCP and A2A servers answer with, and the client
// reads, one JSON-RPC error type (internal/jsonrpc.Error): none of them
// declares an error object of its own.
func TestOneJSONRPCError(t *testing.T) {
	t.Parallel()
	own := regexp.MustCompile(`^\s+Code\s+int\s+` + "`" + `json:"code"`)
	var found []string
	srcs := goSources(t, "mcp", "a2a", "client", "cmd/otc", "federation")
	for _, src := range srcs {
		for i, line := range src.lines {
			if own.MatchString(line) {
				found = append(found, src.path+":"+strconv.Itoa(i+1))
			}
		}
	}
	require.Greater(t, len(srcs), 80, "the packages were read")
	assert.Empty(t, found, "a JSON-RPC error object declared outside internal/jsonrpc")
}
