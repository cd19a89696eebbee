package otc_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsCiteOnlyWhatUsersHave checks that godoc, the README and the
// guides cite the protocol or the guides, never the project's internal
// documents, which
// users of the library do not have. Tests may cite them.
func TestDocsCiteOnlyWhatUsersHave(t *testing.T) {
	t.Parallel()
	internal := regexp.MustCompile(`SPEC ?§|SPEC\.md|\bthe seeds?\b|\bseeds?'s?\b|shared/seeds`)
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !(strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go")) && !strings.HasSuffix(path, ".md") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := internal.FindString(line); m != "" {
				t.Errorf("%s:%d cites %q, a document users do not have; cite the protocol's own sections or a guide in docs/: %s", path, i+1, m, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
