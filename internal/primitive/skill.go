package primitive

import (
	"encoding/json"
	"slices"
	"strings"
)

// Skill is a skill of MCP's skills extension: the entry skills/list and
// skills/get show, and the directories resources/directory/read lists.
// Its files are Resources of the set, added and removed with it.
type Skill struct {
	URI    string // of its SKILL.md
	Origin Origin
	Entry  json.RawMessage // the Skill object
	Admits Admits
	// Dirs are its directories (its root and every directory below it),
	// by URI, each with its direct children in order of URI.
	Dirs map[string][]DirEntry
	// Files are its files' resources; Generated, for a skill whose files
	// a function makes when read ("dynamic"), the template they are read
	// through.
	Files     []*Resource
	Generated *Template
}

// DirEntry is a child of a directory: its URI, and the Resource object
// resources/directory/read lists (a subdirectory's with the mimeType
// inode/directory).
type DirEntry struct {
	URI   string
	Entry json.RawMessage
}

// Skill returns the skill whose SKILL.md is at uri, or nil.
func (sn *Snapshot) Skill(uri string) *Skill {
	i, ok := slices.BinarySearchFunc(sn.Skills, uri, func(s *Skill, uri string) int { return strings.Compare(s.URI, uri) })
	if !ok {
		return nil
	}
	return sn.Skills[i]
}

// Directory returns the children of the directory at uri of a skill that
// admits admits, and whether there is one.
func (sn *Snapshot) Directory(uri string, admits func(Admits) bool) ([]DirEntry, bool) {
	for _, s := range sn.Skills {
		root := strings.TrimSuffix(s.URI, "/SKILL.md")
		if uri != root && !strings.HasPrefix(uri, root+"/") {
			continue
		}
		if children, ok := s.Dirs[uri]; ok && admits(s.Admits) {
			return children, true
		}
	}
	return nil, false
}

// AddSkill adds s and its files at once: the skill's URI and every
// file's must be free.
func (s *Set) AddSkill(sk *Skill) error {
	return s.change(Change{Resources: true, Skills: true}, func(next *Snapshot) error {
		if next.Skill(sk.URI) != nil {
			return Problem("a skill at " + sk.URI + " is registered already" + next.Skill(sk.URI).Origin.by())
		}
		for _, f := range sk.Files {
			if was := next.Resource(f.URI); was != nil {
				return Problem("a resource at " + f.URI + " is registered already" + was.Origin.by())
			}
		}
		if t := sk.Generated; t != nil {
			if next.Template(t.Template.String()) != nil {
				return Problem("the resource template " + t.Template.String() + " is registered already")
			}
			next.Templates = insertSorted(next.Templates, t, func(a, b *Template) int { return strings.Compare(a.Template.String(), b.Template.String()) })
		}
		next.Resources = slices.Clone(next.Resources)
		for _, f := range sk.Files {
			next.Resources = insertSorted(next.Resources, f, func(a, b *Resource) int { return strings.Compare(a.URI, b.URI) })
		}
		next.Skills = insertSorted(next.Skills, sk, func(a, b *Skill) int { return strings.Compare(a.URI, b.URI) })
		return nil
	})
}

// RemoveSkill removes s and its files, and reports whether the set held
// it.
func (s *Set) RemoveSkill(sk *Skill) bool {
	removed := false
	_ = s.change(Change{Resources: true, Skills: true}, func(next *Snapshot) error {
		n := len(next.Skills)
		next.Skills = slices.DeleteFunc(slices.Clone(next.Skills), func(x *Skill) bool { return x == sk })
		if removed = n != len(next.Skills); !removed {
			return Problem("")
		}
		next.Resources = slices.DeleteFunc(slices.Clone(next.Resources), func(r *Resource) bool { return slices.Contains(sk.Files, r) })
		if sk.Generated != nil {
			next.Templates = slices.DeleteFunc(slices.Clone(next.Templates), func(t *Template) bool { return t == sk.Generated })
		}
		return nil
	})
	return removed
}
