package otc_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNamedFilesExist checks that every file a comment, a guide or a
// script names exists: a file renamed or removed leaves no pointer behind.
// A name with a directory is looked up from the repository's root and from
// the naming file's directory; a bare name in the naming file's directory
// only (another package's file is named with its directory), or at the
// root for the repository's own documents (README.md).
func TestNamedFilesExist(t *testing.T) {
	t.Parallel()
	named := regexp.MustCompile(`(?:^|[\s"'(\x60\[])((?:[\w.-]+/)*[\w-]+(?:\.[\w-]+)*\.(?:go|md|sh|yml|yaml|cfg))\b`)
	all := map[string]bool{} // every file's path and base name
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") && d.Name() != ".ci" || d.Name() == "node_modules" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		all[path] = true
		switch filepath.Ext(path) {
		case ".go", ".md", ".sh", ".yml", ".yaml":
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	exists := func(from, name string) bool {
		return all[filepath.Clean(name)] || all[filepath.Join(filepath.Dir(from), name)]
	}
	for _, path := range files {
		if path == "CHANGELOG.md" || strings.HasSuffix(path, ".src.md") {
			continue // history names what was; a guide's source is checked as the guide it gives
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if filepath.Ext(path) == ".go" && !strings.Contains(line, "//") {
				continue // Go code itself, not a comment
			}
			if strings.Contains(line, "://") && !strings.Contains(line, "// ") {
				continue
			}
			for _, m := range named.FindAllStringSubmatch(line, -1) {
				name := m[1]
				if ignoredName(name) || exists(path, name) {
					continue
				}
				t.Errorf("%s:%d names %s, which does not exist: %s", path, i+1, name, strings.TrimSpace(line))
			}
		}
	}
}

// ignoredName reports whether a name is not one of this repository's
// files: the documents of the project's own process, which tests cite, a
// report a long run writes (ignored by git), and a placeholder.
func ignoredName(name string) bool {
	switch name {
	case "SPEC.md", "STYLE.md", "DEVELOPERS.md":
		return true
	case "wild-report.md", "../wild-report.md": // make wild's report
		return true
	case "go.yaml": // the module go.yaml.in/yaml/v3
		return true
	case "SKILL.md": // the file every skill holds (package skill)
		return true
	}
	return strings.Contains(name, "NAME")
}
