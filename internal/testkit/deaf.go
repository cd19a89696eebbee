package testkit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// DeafMCPServer is an MCP server over stdio that answers the first
// request (initialize, or whatever comes first) as initialize, then
// writes 100,000 pings to out and never reads in again, so that a
// client's answers fill its input pipe. It returns after an hour, or
// when in fails before the first request: the caller ignores SIGTERM
// (signal.Ignore) to be a server that must be killed.
func DeafMCPServer(in io.Reader, out io.Writer) {
	line, err := bufio.NewReader(in).ReadBytes('\n')
	if err != nil {
		return
	}
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(line, &m)
	w := bufio.NewWriter(out)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"deaf","version":"1"}}}`+"\n", m.ID)
	for i := range 100_000 {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":"p%d","method":"ping"}`+"\n", i)
	}
	_ = w.Flush()
	time.Sleep(time.Hour)
}
