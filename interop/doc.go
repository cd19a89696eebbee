// Package interop tests the native MCP server of github.com/otcgo/otc/mcp
// with the official MCP Go SDK's client, over Streamable HTTP and stdio,
// in every protocol version both speak: the tests build
// examples/calculator and talk to it as a process. It holds no code; it
// is a module of its own so that the otc module never depends on the SDK.
//
//	cd interop && go test -race ./...
package interop
