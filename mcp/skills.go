package mcp

import (
	"context"
	"encoding/json"

	"github.com/otcgo/otc/internal/mcpwire"
	"github.com/otcgo/otc/internal/primitive"
	"github.com/otcgo/otc/internal/wire"
)

// ExtensionSkills names MCP's skills extension (SEP-2640), which a server
// whose registry holds skills (package skill) declares, with
// directoryRead.
const ExtensionSkills = mcpwire.ExtensionSkills

// The methods of the skills extension.
const (
	methodSkillsList    = "skills/list"
	methodSkillsGet     = "skills/get"
	methodDirectoryRead = "resources/directory/read"
)

// skillsCapability is the extension's declaration, with its leading
// member name.
const skillsCapability = `"` + ExtensionSkills + `":{"directoryRead":true}`

// getSkill answers skills/get: the entry of the skill whose SKILL.md is
// at params.uri, or -32602 when no skill the caller may see is there.
func (s *server) getSkill(x *exchange, sn *primitive.Snapshot, p *primitiveParams, admits func(primitive.Admits) bool) ([]byte, *rpcError) {
	if p.URI == nil || *p.URI == "" {
		return nil, newError(codeInvalidParams, "Invalid params: skills/get names the skill by the URI of its SKILL.md in params.uri")
	}
	sk := sn.Skill(*p.URI)
	if sk == nil || !admits(sk.Admits) {
		return nil, newError(codeInvalidParams, "Invalid params: no skill is served at %s; skills/list names them", wire.Truncate(*p.URI, 200))
	}
	b := append(make([]byte, 0, len(sk.Entry)+64), `{"skill":`...)
	b = append(b, sk.Entry...)
	b = append(b, x.gen.readExtra(s)...)
	return append(b, '}'), nil
}

// readDirectory answers resources/directory/read: the direct children of
// a directory of a skill, a page at a time, or -32602 when the URI is no
// directory the caller may see.
func (s *server) readDirectory(ctx context.Context, x *exchange, sn *primitive.Snapshot, p *primitiveParams, q pageQuery, admits func(primitive.Admits) bool) ([]byte, *rpcError) {
	if p.URI == nil || *p.URI == "" {
		return nil, newError(codeInvalidParams, "Invalid params: resources/directory/read names the directory in params.uri")
	}
	children, ok := sn.Directory(*p.URI, admits)
	if !ok {
		return nil, newError(codeInvalidParams, "Invalid params: %s is not a directory resource of this server", wire.Truncate(*p.URI, 200))
	}
	return s.listReadables(ctx, x, func() ([]byte, *rpcError) {
		return listPage(s, q, mcpwire.MemberResources, children, func(c primitive.DirEntry) (string, json.RawMessage, bool) {
			return c.URI, c.Entry, true
		})
	})
}
