// Package export prepares a catalog of tools for a model: it declares the
// tools in the function-calling shapes of the model APIs (OpenAI's, with
// or without strict mode, Anthropic's, Gemini's, and MCP's Tool objects),
// and maps the name a model chose back to the tool to call.
//
// A catalog listed from a remote server is the server's to write: every
// name, description and schema in it reaches a model. [New] checks it
// first, and refuses with a [*CatalogError] naming the tool what a model
// API cannot take or an agent framework cannot resolve.
//
// The definitions come from [github.com/otcgo/otc/client.Client.ListTools]
// for a remote server, or from [github.com/otcgo/otc.Registry.Tools] for
// an agent that runs in the same process as its tools:
//
//	defs, err := c.ListTools(ctx)
//	if err != nil { ... }
//	tools, err := export.New(defs, nil)
//	if err != nil { ... }
//	// Give tools.OpenAI() or tools.Anthropic() to the model; when it picks
//	// a tool by name, with arguments args:
//	def, ok := tools.Lookup(name)
//	res, err := c.Call(ctx, def.ID, args, nil)
package export
