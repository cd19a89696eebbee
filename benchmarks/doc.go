// Package benchmarks compares the cost of one tool call, "add two
// numbers", served by this module's handlers, by hand-written handlers and
// by other Go MCP servers.
package benchmarks
