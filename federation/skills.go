package federation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"testing/fstest"

	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/internal/wire"
	"github.com/otcgo/otc/skill"
)

// carriedSkill is an upstream's skill the gateway serves: the entry the
// upstream gave, and the handle of the gateway's copy.
type carriedSkill struct {
	print   []byte
	handles []*skill.Handle // the skill's, then the skills nested in it
}

// refreshSkills serves the skills of an MCP upstream that declares the
// skills extension, each under the upstream's name
// (skill://<upstream>/<path>/…, as a prompt is named after it) and its
// local policy, once every file of it is read and verified against the
// upstream's entry (its size, its digest, the SKILL.md's front matter):
// the gateway's copy is what the gateway's clients verify, so the
// upstream's is checked before it is served. A skill whose entry has not
// changed is not read again; one that is dynamic (nothing to verify),
// that fails verification or the checks of a local registration, is left
// out and named in the returned list.
//
// It also returns the URIs of the upstream's files it serves copies of:
// those are not carried as the upstream's resources as well.
func (u *upstream) refreshSkills(ctx context.Context, s *client.Session) (skipped []string, copied map[string]bool) {
	copied = map[string]bool{}
	list, err := s.ListSkills(ctx)
	if err != nil {
		if !errors.Is(err, client.ErrNoSkills) {
			skipped = append(skipped, fmt.Sprintf("skills: %v", err))
		}
		u.dropSkills(nil)
		return skipped, copied
	}
	keep := map[string]bool{} // the skills served, by the upstream's URI
	for i := range list {
		sk := &list[i]
		if nestedIn(sk, list) {
			continue // carried with the skill it is in
		}
		print, _ := json.Marshal(struct {
			*client.Skill
			Files []client.SkillFile
		}{sk, sk.Files})
		u.skillsMu.Lock()
		was := u.skills[sk.URI]
		u.skillsMu.Unlock()
		if was != nil && bytes.Equal(was.print, print) {
			keep[sk.URI] = true
			continue
		}
		if was != nil {
			// Changed upstream: the old copy goes, and the new one is
			// served once read and verified.
			removeAll(was.handles)
			u.skillsMu.Lock()
			delete(u.skills, sk.URI)
			u.skillsMu.Unlock()
		}
		hs, err := u.copySkill(ctx, s, sk)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("skill %s: %v", wire.Truncate(sk.URI, 200), err))
			continue
		}
		keep[sk.URI] = true
		u.skillsMu.Lock()
		if u.skills == nil {
			u.skills = map[string]*carriedSkill{}
		}
		u.skills[sk.URI] = &carriedSkill{print: print, handles: hs}
		u.skillsMu.Unlock()
	}
	u.dropSkills(keep)
	// The files of the skills served (a nested skill's are its enclosing
	// skill's too: its entry lists them).
	for i := range list {
		if keep[list[i].URI] {
			for _, f := range list[i].Files {
				copied[f.URI] = true
			}
		}
	}
	return skipped, copied
}

// copySkill reads every file of the upstream's skill sk, verified, and
// registers the copy.
func (u *upstream) copySkill(ctx context.Context, s *client.Session, sk *client.Skill) ([]*skill.Handle, error) {
	if sk.Dynamic {
		return nil, errors.New("its files are generated (\"dynamic\"): nothing of it can be verified, and it is not carried")
	}
	_, after, ok := strings.Cut(sk.URI, "://")
	root, isMD := strings.CutSuffix(after, "/SKILL.md")
	if !ok || !isMD {
		return nil, errors.New("its URI does not end in /SKILL.md")
	}
	if len(sk.Files) > skill.MaxFiles {
		return nil, fmt.Errorf("it lists %d files, more than the %d a skill may", len(sk.Files), skill.MaxFiles)
	}
	files := fstest.MapFS{}
	total := int64(0)
	for _, f := range sk.Files {
		if total += f.Size; total > skill.MaxTotalBytes {
			return nil, fmt.Errorf("its files are more than %d bytes", skill.MaxTotalBytes)
		}
		_, rest, _ := strings.Cut(f.URI, "://")
		name, err := url.PathUnescape(rest)
		if err != nil || !strings.HasPrefix(rest, root+"/") || !fs.ValidPath(name) {
			return nil, fmt.Errorf("it lists %s, which is not a file of its folder", wire.Truncate(f.URI, 200))
		}
		data, err := s.ReadSkillFile(ctx, sk, f.URI)
		if err != nil {
			return nil, err
		}
		files[name] = &fstest.MapFile{Data: data}
	}
	return skill.Register(u.f.reg, files, &skill.Options{Prefix: u.cfg.Name, Policy: u.cfg.Policy})
}

// nestedIn reports whether sk lies in the folder of another skill of
// list.
func nestedIn(sk *client.Skill, list []client.Skill) bool {
	for i := range list {
		if outer := strings.TrimSuffix(list[i].URI, "SKILL.md"); list[i].URI != sk.URI && strings.HasPrefix(sk.URI, outer) {
			return true
		}
	}
	return false
}

// removeAll removes the skills of hs (the enclosing one last).
func removeAll(hs []*skill.Handle) {
	for i := len(hs) - 1; i >= 0; i-- {
		hs[i].Remove()
	}
}

// dropSkills stops serving the upstream's skills that keep does not name
// (all of them, for nil).
func (u *upstream) dropSkills(keep map[string]bool) {
	u.skillsMu.Lock()
	defer u.skillsMu.Unlock()
	for uri, c := range u.skills {
		if !keep[uri] {
			removeAll(c.handles)
			delete(u.skills, uri)
		}
	}
}
