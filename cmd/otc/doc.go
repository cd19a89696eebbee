// Command otc lists and calls the tools of an OTC/OXP tool server from a
// terminal.
//
//	go install github.com/otcgo/otc/cmd/otc@latest
//
//	otc tools URL              # the tools: id, name, description
//	otc tools URL TOOL         # one tool's parameters, as a tree
//	otc call URL TOOL '{"a":1}' # call a tool and print its result
//	otc call URL TOOL a=1 b=2  # the same, arguments as key=value
//	otc tools --mcp URL/mcp    # the same over MCP (Streamable HTTP)
//	otc inspect URL            # a page to browse and call the tools
//	otc gateway --config FILE  # serve other servers' tools (docs/federation.md)
//
// Every command takes --json, for scripts. Run "otc help" for the options.
//
// "otc check URL" checks a server against the protocol's rules; it calls
// no tool the user has not named (see "otc help").
//
// "otc inspect URL" serves a page on 127.0.0.1 to browse a server's tools
// and call them (OTC/OXP, --mcp, --rest, or several to compare). It prints
// the page's URL, with the token every request of the page needs, on a
// line of its own. The page is embedded (inspect/); the proxy behind it
// talks only to the servers of the command line and adds the credentials,
// which the page never sees.
//
// Exit codes: 0 the command succeeded; 1 the tool ran and returned an
// error; 2 the input was bad (a usage mistake, or input the server refused
// as invalid); 3 the server refused the call (unknown tool, missing
// secrets, credentials, policy); 4 the server could not be reached or
// answered something that is not the protocol; 5 "otc check" found a
// failure; 6 the tool asked its user a question otc could not put (with
// --json, or without a terminal on standard input); 130 interrupted
// (Ctrl-C; with --task, after cancelling the task).
//
// "otc gateway --config FILE" serves the tools of the upstreams a YAML
// file names (OTC, REST, MCP over HTTP or as a process, A2A) from one
// registry, over every format, with their state at /federation/health
// (package federation).
//
// Over MCP, "otc call" shows a tool's questions (elicitations) as prompts
// on a terminal, and "otc call --mcp --task" (or "--a2a --task") polls a
// task to its end.
package main
