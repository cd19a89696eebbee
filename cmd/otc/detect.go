package main

import (
	"errors"
	"fmt"

	"github.com/otcgo/otc/client"
)

// This file names the wire formats the command speaks.

// noToolServer is common.server's failure: nothing at the URL answers as a tool
// server. The command exits with exitTransport, as for any answer that is
// not the protocol.
type noToolServer struct{ msg string }

func (e *noToolServer) Error() string { return e.msg }

// serverFailed prints the failure of common.server for cmd and returns
// the exit code: exitTransport when nothing answered as a tool server,
// exitBadInput for options that do not go together.
func (e *cli) serverFailed(cmd string, err error) int {
	fmt.Fprintf(e.stderr, "otc %s: %v\n", cmd, err)
	var nts *noToolServer
	if errors.As(err, &nts) {
		return exitTransport
	}
	return exitBadInput
}

// format is a wire format the command speaks.
type format uint8

const (
	formatOTC format = iota // the zero value: no flag names another
	formatMCP
	formatREST
	formatA2A
	formatStdio // an MCP server over stdio
)

// kind names the format for a note.
func (f format) kind() string {
	return [...]string{"an OTC server", "an MCP endpoint", "a REST view", "an A2A agent", "an MCP server over stdio"}[f]
}

// flag is the flag that names the format, with a space, or "".
func (f format) flag() string {
	return [...]string{"", "--mcp ", "--rest ", "--a2a ", "--stdio "}[f]
}

// wire is the client's name of the format.
func (f format) wire() client.Format {
	return [...]client.Format{client.FormatOTC, client.FormatMCP, client.FormatREST, client.FormatA2A, client.FormatMCP}[f]
}

// fromWire is the format of the client's name.
func fromWire(w client.Format) format {
	switch w {
	case client.FormatMCP:
		return formatMCP
	case client.FormatREST:
		return formatREST
	case client.FormatA2A:
		return formatA2A
	}
	return formatOTC
}
