// Package skillmd reads what a skill's SKILL.md begins with, its YAML
// front matter: the server (package skill) when it registers a skill,
// the client when it verifies one it read.
package skillmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"go.yaml.in/yaml/v3"
)

// FrontMatter reads the YAML front matter a SKILL.md begins with: as
// JSON (verbatim, every field the author wrote) and as values. An error
// says what is wrong, with the line of the file when YAML names one.
func FrontMatter(md []byte) (json.RawMessage, map[string]any, error) {
	md = bytes.TrimPrefix(md, []byte("\ufeff"))
	rest, ok := cutLine(md, "---")
	if !ok {
		return nil, nil, errors.New("it does not begin with YAML front matter (a line ---, the YAML, a line ---)")
	}
	var yamlText []byte
	for line := 2; ; line++ {
		if len(rest) == 0 {
			return nil, nil, errors.New("its front matter has no closing --- line")
		}
		end := bytes.IndexByte(rest, '\n')
		cur := rest
		if end >= 0 {
			cur = rest[:end]
		}
		if string(bytes.TrimRight(cur, " \t\r")) == "---" {
			break
		}
		yamlText = append(append(yamlText, cur...), '\n')
		if end < 0 {
			rest = nil
		} else {
			rest = rest[end+1:]
		}
	}
	var fm map[string]any
	if err := yaml.Unmarshal(yamlText, &fm); err != nil {
		return nil, nil, fmt.Errorf("its front matter is not YAML: %s", shiftLines(err.Error()))
	}
	if fm == nil {
		return nil, nil, errors.New("its front matter is empty: it holds at least name and description")
	}
	b, err := json.Marshal(fm)
	if err != nil {
		return nil, nil, fmt.Errorf("its front matter cannot be written as JSON: %v", err)
	}
	return b, fm, nil
}

// cutLine returns what follows the first line of b when that line is
// want (a carriage return before its newline allowed).
func cutLine(b []byte, want string) ([]byte, bool) {
	end := bytes.IndexByte(b, '\n')
	if end < 0 {
		return nil, false
	}
	if string(bytes.TrimRight(b[:end], " \t\r")) != want {
		return nil, false
	}
	return b[end+1:], true
}

// lineRef finds the line numbers YAML's errors give.
var lineRef = regexp.MustCompile(`line (\d+)`)

// shiftLines turns the line numbers of an error about the front matter
// into the file's: the front matter begins on line 2.
func shiftLines(msg string) string {
	return lineRef.ReplaceAllStringFunc(msg, func(m string) string {
		var n int
		_, _ = fmt.Sscanf(m, "line %d", &n)
		return fmt.Sprintf("line %d", n+1)
	})
}
