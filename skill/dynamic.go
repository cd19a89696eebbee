package skill

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/mcpwire"
	"github.com/otcgo/otc/internal/primitive"
	"github.com/otcgo/otc/internal/uritemplate"
)

// Dynamic is a skill whose files a function makes when they are read (a
// report of today's data, say): its entry's files are "dynamic", with no
// digests, and a client that verifies what it reads cannot (some hosts
// decline such skills).
type Dynamic struct {
	// Path is where the skill is, below skill:// ("reports/daily"); its
	// last segment is the skill's name.
	Path string
	// Frontmatter is the front matter its SKILL.md begins with: name (the
	// path's last segment) and description at least. What Read makes of
	// SKILL.md must begin with the same.
	Frontmatter map[string]any
	// Read returns the contents of the skill's file at file, a path below
	// the skill's folder ("SKILL.md", "data/today.csv"), or an error
	// wrapping resource.ErrNotFound for a file it does not have.
	Read func(ctx context.Context, file string) ([]byte, error)
	// Policy is as for [Options.Policy].
	Policy *otc.Policy
}

// RegisterDynamic registers a skill whose files d.Read makes, each read
// at skill://<path>/<file>. It fails, naming the culprit, when the path or
// the front matter breaks the rules [Register] holds a SKILL.md to, or
// Read is nil.
func RegisterDynamic(reg *otc.Registry, d Dynamic) (*Handle, error) {
	fail := func(format string, args ...any) (*Handle, error) {
		return nil, fmt.Errorf("skill: dynamic skill %q: %s", d.Path, fmt.Sprintf(format, args...))
	}
	if reg == nil || d.Read == nil {
		return fail("RegisterDynamic needs a registry and a Read function")
	}
	p := strings.Trim(d.Path, "/")
	name, _ := d.Frontmatter["name"].(string)
	description, _ := d.Frontmatter["description"].(string)
	switch {
	case p == "" || path.Clean(p) != p:
		return fail("the path is not a clean path of segments")
	case name != path.Base(p):
		return fail("the front matter's name %q is not the path's last segment", name)
	case len(name) > 64 || !namePattern.MatchString(name):
		return fail("the name %q breaks the naming rules: 1 to 64 lowercase letters, digits and hyphens, no hyphen first, last or twice in a row", name)
	case strings.TrimSpace(description) == "" || len(description) > maxDescription:
		return fail("the front matter needs a description of at most %d bytes", maxDescription)
	}
	if problem := seam.PolicyProblem(d.Policy); problem != "" {
		return fail("Policy: %s", problem)
	}
	front, err := json.Marshal(d.Frontmatter)
	if err != nil {
		return fail("the front matter cannot be written as JSON: %v", err)
	}
	root := "skill://" + escapePath(p)
	uri := root + "/" + FileName
	tmpl, err := uritemplate.Parse(root + "/{+file}")
	if err != nil {
		return fail("%v", err)
	}
	admits := seam.Admits(d.Policy, uri)
	entry, _ := json.Marshal(mcpwire.Resource{URITemplate: tmpl.String(), Name: name, Description: description})
	sk := &primitive.Skill{URI: uri, Admits: admits, Dirs: map[string][]primitive.DirEntry{}}
	sk.Generated = &primitive.Template{Template: tmpl, Entry: entry, Admits: admits, Guard: seam.Guard(d.Policy, uri),
		Read: func(ctx context.Context, u string, vars uritemplate.Values) (json.RawMessage, error) {
			file := strings.TrimPrefix(u, root+"/")
			if file == u || file == "" || path.Clean(file) != file || strings.HasPrefix(file, "../") {
				return nil, primitive.ErrNotFound
			}
			data, err := d.Read(ctx, file)
			if err != nil {
				return nil, err
			}
			return contents(u, mimeOf(file, data), data), nil
		}}
	sk.Entry, err = json.Marshal(struct {
		URI         string          `json:"uri"`
		Frontmatter json.RawMessage `json:"frontmatter"`
		Resources   string          `json:"resources"`
	}{uri, front, "dynamic"})
	if err != nil {
		return nil, err
	}
	set := primitive.Of(reg)
	if err := set.AddSkill(sk); err != nil {
		return fail("%v", err)
	}
	return &Handle{set: set, skill: sk, name: name}, nil
}
