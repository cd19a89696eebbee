// Package skill serves Agent Skills on an [otc.Registry], as MCP's skills
// extension (io.modelcontextprotocol/skills, SEP-2640) carries them: a
// skill is a folder holding a SKILL.md (YAML front matter with at least
// name and description, then instructions for a model) and any files
// beside it. Each file is a resource at skill://<skill-path>/<file>, read
// with resources/read; skills/list and skills/get give each skill's front
// matter and the manifest of its files, each with its SHA-256 digest and
// size, so that a client verifies what it reads; resources/directory/read
// lists a skill's folders.
//
// [Register] takes the skills of an [fs.FS] (an [embed.FS] is the common
// case), reading, checking and digesting every file once, at
// registration: a SKILL.md without front matter, a name that breaks the
// naming rules or is not its folder's, a skill past the limits, are
// errors naming the file (and the line). The skills are the registry's,
// under the same [otc.Policy] as its tools and resources: a caller the
// policy does not admit sees nothing of them.
package skill

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/hook"
	"github.com/otcgo/otc/internal/mcpwire"
	"github.com/otcgo/otc/internal/primitive"
	"github.com/otcgo/otc/internal/skillmd"
)

// seam is what package otc lends the packages beside it (internal/hook).
var seam = hook.Of[otc.Registry, otc.Policy, otc.ToolDefinition, otc.CallRequest, otc.Identity, otc.Error]()

// The limits of one skill, the extension's: every host loads a skill
// within them, and a server serves none past them.
const (
	MaxFiles      = 512
	MaxTotalBytes = 16 << 20
)

// FileName is the file that makes a folder a skill.
const FileName = "SKILL.md"

// Options configure [Register].
type Options struct {
	// Prefix goes before each skill's path ("acme/billing": the skill
	// of the folder refunds is at skill://acme/billing/refunds/SKILL.md);
	// empty for none. Its segments are URI path segments.
	Prefix string
	// Policy restricts who may list, get and read the skills, as a
	// resource's does; nil means anyone the server lets in.
	Policy *otc.Policy
}

// Handle is a registered skill.
type Handle struct {
	set   *primitive.Set
	skill *primitive.Skill
	name  string
}

// URI is the URI of the skill's SKILL.md.
func (h *Handle) URI() string { return h.skill.URI }

// Name is the skill's name.
func (h *Handle) Name() string { return h.name }

// Remove removes the skill and its files from the registry, and reports
// whether they were there. A nested skill's files are its enclosing
// skill's: they go with that one.
func (h *Handle) Remove() bool { return h.set.RemoveSkill(h.skill) }

// namePattern is the Agent Skills specification's naming rule: 1 to 64
// lowercase letters, digits and hyphens, no hyphen first, last or twice
// in a row.
var namePattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// maxDescription bounds a description, as the Agent Skills specification
// does.
const maxDescription = 1024

// Register registers every skill of fsys: each folder holding a SKILL.md,
// at the folder's path below fsys's root (the root itself, when it holds
// one, by its front matter's name), each with every file below its
// folder (a nested skill's files too, which are also its own). It
// registers all of them or none, and fails, naming the file, when a
// SKILL.md does not begin with YAML front matter with a name and a
// description, when a name breaks the naming rules or differs from its
// folder's, when a skill has more than MaxFiles files or MaxTotalBytes
// bytes, or when a URI is taken.
func Register(reg *otc.Registry, fsys fs.FS, opts *Options) ([]*Handle, error) {
	if reg == nil || fsys == nil {
		return nil, errors.New("skill: Register called with a nil *otc.Registry or fs.FS")
	}
	if opts == nil {
		opts = &Options{}
	}
	if problem := seam.PolicyProblem(opts.Policy); problem != "" {
		return nil, errors.New("skill: Policy: " + problem)
	}
	prefix := strings.Trim(opts.Prefix, "/")
	var dirs []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && path.Base(p) == FileName {
			dirs = append(dirs, path.Dir(p))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("skill: reading the skills: %w", err)
	}
	if len(dirs) == 0 {
		return nil, errors.New("skill: no folder holds a " + FileName)
	}
	var skills []*primitive.Skill
	var names []string
	for _, dir := range dirs {
		sk, name, err := build(fsys, dir, prefix, opts.Policy)
		if err != nil {
			return nil, err
		}
		skills, names = append(skills, sk), append(names, name)
	}
	// A nested skill's files are the enclosing skill's too: they are
	// served once, with the enclosing skill, and both list them.
	for _, sk := range skills {
		for _, outer := range skills {
			if outer != sk && strings.HasPrefix(sk.URI, strings.TrimSuffix(outer.URI, FileName)) {
				sk.Files = nil
				break
			}
		}
	}
	set := primitive.Of(reg)
	var handles []*Handle
	for i, sk := range skills {
		if err := set.AddSkill(sk); err != nil {
			for _, h := range handles {
				h.Remove()
			}
			return nil, fmt.Errorf("skill: %s: %w", sk.URI, err)
		}
		handles = append(handles, &Handle{set: set, skill: sk, name: names[i]})
	}
	return handles, nil
}

// file is one file of a skill, read.
type file struct {
	rel  string // its path in the skill's folder
	data []byte
}

// build reads, checks and digests the skill of folder dir.
func build(fsys fs.FS, dir, prefix string, policy *otc.Policy) (*primitive.Skill, string, error) {
	mdPath := path.Join(dir, FileName)
	md, err := fs.ReadFile(fsys, mdPath)
	if err != nil {
		return nil, "", fmt.Errorf("skill: %s: %w", mdPath, err)
	}
	front, fm, err := skillmd.FrontMatter(md)
	if err != nil {
		return nil, "", fmt.Errorf("skill: %s: %w", mdPath, err)
	}
	name, _ := fm["name"].(string)
	description, _ := fm["description"].(string)
	switch {
	case name == "":
		return nil, "", fmt.Errorf("skill: %s: the front matter has no name", mdPath)
	case len(name) > 64 || !namePattern.MatchString(name):
		return nil, "", fmt.Errorf("skill: %s: the name %q breaks the naming rules: 1 to 64 lowercase letters, digits and hyphens, no hyphen first, last or twice in a row", mdPath, name)
	case dir != "." && path.Base(dir) != name:
		return nil, "", fmt.Errorf("skill: %s: the name %q is not its folder's (%s): a skill's folder is its name", mdPath, name, path.Base(dir))
	case strings.TrimSpace(description) == "":
		return nil, "", fmt.Errorf("skill: %s: the front matter has no description", mdPath)
	case len(description) > maxDescription:
		return nil, "", fmt.Errorf("skill: %s: the description is %d bytes, more than the %d allowed", mdPath, len(description), maxDescription)
	}
	skillPath := name
	if dir != "." {
		skillPath = dir
	}
	if prefix != "" {
		skillPath = prefix + "/" + skillPath
	}
	root := "skill://" + escapePath(skillPath)
	if primitive.URIProblem(root+"/"+FileName) != "" {
		return nil, "", fmt.Errorf("skill: %s: the skill's URI %s/%s is not a URI: %s", mdPath, root, FileName, primitive.URIProblem(root+"/"+FileName))
	}

	var files []file
	total := 0
	err = fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if len(files) == MaxFiles {
			return fmt.Errorf("it has more than %d files, the most a skill may", MaxFiles)
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		if total += len(data); total > MaxTotalBytes {
			return fmt.Errorf("its files are more than %d bytes, the most a skill may", MaxTotalBytes)
		}
		rel := strings.TrimPrefix(p, dir+"/")
		if dir == "." {
			rel = p
		}
		files = append(files, file{rel: rel, data: data})
		return nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("skill: %s: %w", dir, err)
	}

	admits := seam.Admits(policy, root+"/"+FileName)
	guard := seam.Guard(policy, root+"/"+FileName)
	sk := &primitive.Skill{URI: root + "/" + FileName, Admits: admits, Dirs: map[string][]primitive.DirEntry{}}
	type manifestEntry struct {
		URI    string `json:"uri"`
		Digest string `json:"digest"`
		Size   int    `json:"size"`
	}
	var manifest []manifestEntry
	children := map[string]map[string]json.RawMessage{root: {}} // dir → child URI → entry
	for _, f := range files {
		uri := root + "/" + escapePath(f.rel)
		sum := sha256.Sum256(f.data)
		manifest = append(manifest, manifestEntry{URI: uri, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: len(f.data)})
		entry := mcpwire.Resource{URI: uri, Name: path.Base(f.rel), MIMEType: mimeOf(f.rel, f.data), Size: int64(len(f.data))}
		if f.rel == FileName {
			entry.Name, entry.Description = name, description
		}
		raw, err := json.Marshal(entry)
		if err != nil {
			return nil, "", err
		}
		sk.Files = append(sk.Files, fileResource(uri, raw, entry.MIMEType, f.data, admits, guard))
		// Every folder on the way is a directory of the skill.
		parent, child, childEntry := root, uri, raw
		for rest := path.Dir(f.rel); ; rest = path.Dir(rest) {
			if rest == "." {
				children[root][child] = childEntry
				break
			}
			parent = root + "/" + escapePath(rest)
			if children[parent] == nil {
				children[parent] = map[string]json.RawMessage{}
			}
			children[parent][child] = childEntry
			child = parent
			childEntry, _ = json.Marshal(mcpwire.Resource{URI: parent, Name: path.Base(rest), MIMEType: DirectoryType})
		}
	}
	for dirURI, kids := range children {
		uris := make([]string, 0, len(kids))
		for u := range kids {
			uris = append(uris, u)
		}
		slices.Sort(uris)
		list := make([]primitive.DirEntry, len(uris))
		for i, u := range uris {
			list[i] = primitive.DirEntry{URI: u, Entry: kids[u]}
		}
		sk.Dirs[dirURI] = list
	}
	slices.SortFunc(manifest, func(a, b manifestEntry) int { return strings.Compare(a.URI, b.URI) })
	sk.Entry, err = json.Marshal(struct {
		URI         string          `json:"uri"`
		Frontmatter json.RawMessage `json:"frontmatter"`
		Resources   []manifestEntry `json:"resources"`
	}{sk.URI, front, manifest})
	if err != nil {
		return nil, "", err
	}
	return sk, name, nil
}

// DirectoryType is the MIME type of a directory resource.
const DirectoryType = "inode/directory"

// fileResource is the resource of a file of a skill, whose contents are
// the bytes read at registration: text when they are UTF-8, else binary.
func fileResource(uri string, entry json.RawMessage, mimeType string, data []byte, admits primitive.Admits, guard hook.Guard) *primitive.Resource {
	c := contents(uri, mimeType, data)
	return &primitive.Resource{URI: uri, Entry: entry, Admits: admits, Guard: guard,
		Read: func(context.Context, string) (json.RawMessage, error) { return c, nil }}
}

// contents is the contents array of a file's read: text when its bytes
// are UTF-8, else binary.
func contents(uri, mimeType string, data []byte) json.RawMessage {
	return mcpwire.AppendOneContents(nil, uri, mimeType, string(data), data, !utf8.Valid(data))
}

// mimeOf is the MIME type of a skill's file: text/markdown for Markdown
// (SKILL.md included), what its extension says, else text/plain for
// UTF-8 text and application/octet-stream for the rest.
func mimeOf(name string, data []byte) string {
	ext := strings.ToLower(path.Ext(name))
	if ext == ".md" || ext == ".markdown" {
		return "text/markdown"
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	if utf8.Valid(data) {
		return "text/plain"
	}
	return "application/octet-stream"
}

// escapePath escapes each segment of a slash-separated path for a URI.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}
