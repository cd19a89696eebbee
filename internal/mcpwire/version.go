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
	// ClientOnly marks a version the client speaks, to reach the servers
	// people still run, and otc's server does not serve: what it lacks
	// (structured results, elicitation, titles) is simply absent.
	ClientOnly bool
}

// Versions are the versions otc speaks, newest first.
var Versions = []*Version{
	{Name: V20260728, Stateless: true, Icons: true},
	{Name: V20251125, Icons: true},
	{Name: V20250618},
	{Name: V20250326, ClientOnly: true},
	{Name: V20241105, ClientOnly: true},
}

// Served are the versions otc's server serves, newest first.
var Served = func() []*Version {
	var out []*Version
	for _, v := range Versions {
		if !v.ClientOnly {
			out = append(out, v)
		}
	}
	return out
}()

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

// LookupServed is Lookup among the versions otc's server serves.
func LookupServed(name string) *Version {
	if v := Lookup(name); v != nil && !v.ClientOnly {
		return v
	}
	return nil
}

// Names lists the names of vs (Versions when nil), newest first, joined
// for a message ("2026-07-28, 2025-11-25 or 2025-06-18" with conj "or").
func Names(vs []*Version, conj string) string {
	if vs == nil {
		vs = Versions
	}
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.Name
	}
	return strings.Join(names[:len(names)-1], ", ") + " " + conj + " " + names[len(names)-1]
}
