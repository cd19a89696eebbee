package client

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/otcgo/otc/internal/mcpwire"
	"github.com/otcgo/otc/internal/skillmd"
)

// Skill is a skill an MCP server serves (its skills extension, SEP-2640):
// the entry skills/list and skills/get give, from which the skill's files
// are read and verified ([Session.ReadSkillFile]).
type Skill struct {
	// URI is the URI of the skill's SKILL.md.
	URI string `json:"uri"`
	// Frontmatter is the SKILL.md's front matter as the server gives it:
	// name and description at least.
	Frontmatter map[string]any `json:"frontmatter"`
	// Files lists the skill's files with their digests and sizes; nil
	// when Dynamic.
	Files []SkillFile `json:"-"`
	// Dynamic says the server generates the skill's files and gives no
	// digests: what is read from it cannot be verified.
	Dynamic bool `json:"-"`
}

// Name is the skill's name, from its front matter.
func (s *Skill) Name() string { n, _ := s.Frontmatter["name"].(string); return n }

// Description is the skill's description, from its front matter.
func (s *Skill) Description() string { d, _ := s.Frontmatter["description"].(string); return d }

// SkillFile is a file of a skill: its URI, the SHA-256 of its bytes
// ("sha256:" and 64 hexadecimal digits), and their number.
type SkillFile struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// UnmarshalJSON reads a skill entry: its resources are a manifest or
// "dynamic"; anything else is refused, as the extension says.
func (s *Skill) UnmarshalJSON(b []byte) error {
	type plain Skill
	var w struct {
		plain
		Resources json.RawMessage `json:"resources"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*s = Skill(w.plain)
	switch {
	case string(w.Resources) == `"dynamic"`:
		s.Dynamic = true
	case len(w.Resources) > 0 && w.Resources[0] == '[':
		if err := json.Unmarshal(w.Resources, &s.Files); err != nil {
			return fmt.Errorf("skill %s: resources: %w", truncate(s.URI, 200), err)
		}
	default:
		return fmt.Errorf("skill %s: resources is neither a list of files nor \"dynamic\": the entry is invalid", truncate(s.URI, 200))
	}
	if s.URI == "" || s.Name() == "" {
		return errors.New("a skill entry without a uri or a front matter name is invalid")
	}
	return nil
}

// ErrSkillUnverified is what [Session.ReadSkillFile] returns (wrapped,
// naming the file) for content that is not what the skill's entry says:
// a file the entry does not list, a size or a digest that differs, a
// SKILL.md whose front matter differs from the entry's. The content is
// not given back; get the skill again ([Session.GetSkill]) to read what
// the server serves now.
var ErrSkillUnverified = errors.New("the skill's content does not match its entry")

// ErrNoSkills is what the skills methods return (wrapped) for a server
// that does not declare the skills extension: it is not asked.
var ErrNoSkills = fmt.Errorf("the server does not declare the skills extension (%s)", mcpwire.ExtensionSkills)

// skillsReady makes the handshake and checks that the server declared
// the skills extension.
func (ss *Session) skillsReady(ctx context.Context) error {
	if err := ss.s.ensure(ctx, nil); err != nil {
		return err
	}
	if !ss.s.skills.Load() {
		return ErrNoSkills
	}
	return nil
}

// ListSkills lists the skills of an MCP server, following cursors. It
// reads nothing of them.
func (ss *Session) ListSkills(ctx context.Context) ([]Skill, error) {
	if err := ss.skillsReady(ctx); err != nil {
		return nil, fmt.Errorf("otc client: list skills: %w", err)
	}
	out, err := pages[Skill](ctx, ss.s, "skills/list", mcpwire.MemberSkills)
	if err != nil {
		return nil, fmt.Errorf("otc client: list skills: %w", err)
	}
	return out, nil
}

// GetSkill returns the entry of the skill whose SKILL.md is at uri, as
// the server serves it now.
func (ss *Session) GetSkill(ctx context.Context, uri string) (*Skill, error) {
	if err := ss.skillsReady(ctx); err != nil {
		return nil, fmt.Errorf("otc client: get skill %s: %w", truncate(uri, 200), err)
	}
	var res struct {
		Skill *Skill `json:"skill"`
	}
	if err := ss.s.request(ctx, nil, "skills/get", mcpwire.URIParams{URI: uri}.Map(), &res); err != nil {
		return nil, fmt.Errorf("otc client: get skill %s: %w", truncate(uri, 200), err)
	}
	if res.Skill == nil || res.Skill.URI != uri {
		return nil, fmt.Errorf("otc client: get skill %s: the server answered with no entry for it", truncate(uri, 200))
	}
	return res.Skill, nil
}

// ReadSkillFile reads the file at uri of skill sk, and gives its bytes
// only once they are what sk's entry says: a file sk lists, of its size
// and digest, and for the SKILL.md, front matter equal to sk's, field by
// field. Anything else is an error wrapping ErrSkillUnverified. The file
// of a dynamic skill cannot be verified: it is read as it comes, within
// sk's directory.
func (ss *Session) ReadSkillFile(ctx context.Context, sk *Skill, uri string) ([]byte, error) {
	fail := func(format string, args ...any) ([]byte, error) {
		return nil, fmt.Errorf("otc client: read %s of skill %s: %s: %w", truncate(uri, 200), sk.Name(), fmt.Sprintf(format, args...), ErrSkillUnverified)
	}
	var want *SkillFile
	for i := range sk.Files {
		if sk.Files[i].URI == uri {
			want = &sk.Files[i]
		}
	}
	root := strings.TrimSuffix(sk.URI, "/SKILL.md")
	if !sk.Dynamic && want == nil || sk.Dynamic && !strings.HasPrefix(uri, root+"/") {
		return fail("the skill's entry does not list it")
	}
	contents, err := ss.ReadResource(ctx, uri)
	if err != nil {
		return nil, err
	}
	if len(contents) != 1 {
		return fail("the server answered with %d contents, not one", len(contents))
	}
	data := contents[0].Blob
	if data == nil {
		data = []byte(contents[0].Text)
	}
	if want != nil {
		if int64(len(data)) != want.Size {
			return fail("it is %d bytes, not the %d its entry says", len(data), want.Size)
		}
		sum := sha256.Sum256(data)
		if got := "sha256:" + hex.EncodeToString(sum[:]); got != want.Digest {
			return fail("its digest is %s, not the %s its entry says", got, truncate(want.Digest, 80))
		}
	}
	if uri == sk.URI {
		_, fm, err := skillmd.FrontMatter(data)
		if err != nil {
			return fail("%v", err)
		}
		if !sameFrontMatter(fm, sk.Frontmatter) {
			return fail("its front matter differs from its entry's")
		}
	}
	return data, nil
}

// sameFrontMatter reports whether two front matters hold the same fields
// and values, compared as JSON reads them.
func sameFrontMatter(a, b map[string]any) bool {
	norm := func(m map[string]any) any {
		raw, err := json.Marshal(m)
		if err != nil {
			return nil
		}
		var v any
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		_ = d.Decode(&v)
		return v
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

// ReadDirectory lists the direct children of the directory resource at
// uri (resources/directory/read), following cursors: a subdirectory has
// the MIME type inode/directory. The server must declare the skills
// extension.
func (ss *Session) ReadDirectory(ctx context.Context, uri string) ([]Resource, error) {
	if err := ss.skillsReady(ctx); err != nil {
		return nil, fmt.Errorf("otc client: read directory %s: %w", truncate(uri, 200), err)
	}
	out, err := pagesOf[Resource](ctx, ss.s, "resources/directory/read", mcpwire.MemberResources, mcpwire.URIParams{URI: uri}.Map())
	if err != nil {
		return nil, fmt.Errorf("otc client: read directory %s: %w", truncate(uri, 200), err)
	}
	return out, nil
}
