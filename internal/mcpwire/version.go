package mcpwire

import "strings"

// Version is one MCP protocol version, and what the wire does
// differently in it: the value the server and the client branch on, so
// that a version is added or changed in one place.
type Version struct {
	// Name is the version as the wire spells it: "2026-07-28".
	Name string
	// Stateless marks the generation of 2026-07-28: no initialize and no
	// session (server/discover finds the server, and answers in place of
	// ping); each request carries the version, the client's capabilities
	// and its info in _meta, and its method and name in the Mcp-Method
	// and Mcp-Name headers; a tool's questions come back as
	// input_required rounds of its request.
	Stateless bool
	// Icons says that the Tool object carries icons (from 2025-11-25).
	Icons bool
}

// Versions are the versions otc speaks, newest first.
var Versions = []*Version{
	{Name: V20260728, Stateless: true, Icons: true},
	{Name: V20251125, Icons: true},
	{Name: V20250618},
}

// Latest is the newest version, and LatestSession the newest that
// begins with initialize.
var (
	Latest        = Versions[0]
	LatestSession = Versions[1]
)

// Lookup returns the version named name; nil for one otc does not speak.
func Lookup(name string) *Version {
	for _, v := range Versions {
		if v.Name == name {
			return v
		}
	}
	return nil
}

// Names lists the versions' names, newest first, joined for a message
// ("2026-07-28, 2025-11-25 or 2025-06-18" with conj "or").
func Names(conj string) string {
	names := make([]string, len(Versions))
	for i, v := range Versions {
		names[i] = v.Name
	}
	return strings.Join(names[:len(names)-1], ", ") + " " + conj + " " + names[len(names)-1]
}
