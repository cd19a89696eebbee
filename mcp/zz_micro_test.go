package mcp

import "testing"

const zzBody = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"Calculator_Add","arguments":{"a":10,"b":5},` +
	`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
	`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"}}}}`

func BenchmarkZZMessage(b *testing.B) {
	body := []byte(zzBody)
	b.ReportAllocs()
	for b.Loop() {
		var m message
		readMessage(body, &m, "body")
		m.releaseArgs()
	}
}
