package wire

// The paths below a server's root at which an otc server (mount.All, and
// so otc gateway and the example) serves each wire format: the mount
// package exports them, and the client's Dial and the federation look
// for a format there.
const (
	PathOTC      = "/otc"
	PathMCP      = "/mcp"
	PathREST     = "/v1"
	PathRegistry = "/registry"
	PathA2A      = "/a2a"
)
