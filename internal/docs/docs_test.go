package docs_test

import (
	"bytes"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/internal/docs"
)

// root is the repository's root, seen from this package's directory.
const root = "../.."

// TestGenerated fails when README.md or a guide is not what its source and
// snippets give: someone edited the output, or changed a source or a
// snippet without running the generator.
func TestGenerated(t *testing.T) {
	t.Parallel()
	sources, err := docs.Sources(root)
	require.NoError(t, err)
	for _, s := range sources {
		want, err := docs.Generate(root, s)
		require.NoError(t, err)
		have, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(s.Out)))
		require.NoError(t, err)
		if !bytes.Equal(have, want) {
			t.Errorf("%s is not what %s gives: edit the source, then run go generate ./internal/docs", s.Out, s.Src)
		}
	}
}

// TestREADMECommands keeps the two commands that scripts and checks
// outside the repository copy from the README.
func TestREADMECommands(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	for _, cmd := range []string{"go run ./examples/calculator\n", "go test -race work\n"} {
		assert.Contains(t, string(readme), "\n"+cmd, "the README must show %q on a line of its own", strings.TrimSpace(cmd))
	}
}

var (
	link       = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	inlineCode = regexp.MustCompile("`[^`]*`")
	heading    = regexp.MustCompile(`^#{1,6} (.*)$`)
)

// TestLinks checks every relative link of the generated documents: its
// file exists, and its #anchor is a heading there.
func TestLinks(t *testing.T) {
	t.Parallel()
	sources, err := docs.Sources(root)
	require.NoError(t, err)
	for _, s := range sources {
		text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(s.Out)))
		require.NoError(t, err)
		for _, target := range links(string(text)) {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			dest := s.Out
			if file != "" {
				dest = path.Join(path.Dir(s.Out), file)
			}
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(dest))); err != nil {
				t.Errorf("%s links to %s, which does not exist", s.Out, target)
				continue
			}
			if anchor == "" {
				continue
			}
			destText, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(dest)))
			require.NoError(t, err)
			if !anchors(string(destText))[anchor] {
				t.Errorf("%s links to %s: %s has no heading with that anchor", s.Out, target, dest)
			}
		}
	}
}

// lines returns the lines of a Markdown text outside code blocks.
func lines(text string) []string {
	var out []string
	inFence := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inFence = !inFence
			continue
		}
		if !inFence {
			out = append(out, l)
		}
	}
	return out
}

func links(text string) []string {
	var out []string
	for _, l := range lines(text) {
		for _, m := range link.FindAllStringSubmatch(inlineCode.ReplaceAllString(l, ""), -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// anchors returns the anchors GitHub gives the headings of a text: lower
// case, spaces made hyphens, other punctuation dropped, and -1, -2 … after
// a repeated one.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	for _, l := range lines(text) {
		m := heading.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		for i := 1; out[a]; i++ {
			a = b.String() + "-" + strconv.Itoa(i)
		}
		out[a] = true
	}
	return out
}

// TestREADMEIsAnEntrance keeps the README the entrance and the guides the
// manual: about 1,200 words at most, with the dependencies and the
// development notes in docs/development.md.
func TestREADMEIsAnEntrance(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	words := len(strings.Fields(string(readme)))
	assert.LessOrEqual(t, words, 1200, "README.md has %d words: move detail to a guide", words)
	assert.NotContains(t, string(readme), "| module | why |", "the dependency table belongs in docs/development.md")
	dev, err := os.ReadFile(filepath.Join(root, "docs", "development.md"))
	require.NoError(t, err)
	assert.Contains(t, string(dev), "| module | why |")
}
