package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"unicode"

	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/internal/jsonrpc"
	"github.com/otcgo/otc/internal/mcpwire"
)

// The commands of what an MCP server offers beside its tools:
//
//	otc resources URL          the resources and resource templates
//	otc read URL URI           a resource's contents
//	otc prompts URL            the prompts and their arguments
//	otc prompt URL NAME k=v…   a prompt, rendered
//	otc watch URL URI…         each update of resources, as it comes
//
// URL is an MCP endpoint (or --stdio COMMAND): only MCP has these.

// readable opens the server of a resources or prompts command: URL is
// taken as an MCP endpoint unless --stdio names a process. want is how
// many arguments follow URL, at least and at most.
func (e *cli) readable(ctx context.Context, cmd string, args []string, least, most int, usage string) (*client.Client, *common, []string, int) {
	return e.readableWith(ctx, cmd, args, least, most, usage, nil)
}

// readableWith is readable with more of the client's options (nil for
// none).
func (e *cli) readableWith(ctx context.Context, cmd string, args []string, least, most int, usage string, more func(*client.Options)) (*client.Client, *common, []string, int) {
	fs := newFlagSet(cmd, e.stderr)
	var o common
	o.register(fs, e.getenv)
	pos, err := parse(fs, args)
	if err != nil {
		return nil, nil, nil, exitBadInput
	}
	if o.formats == 0 {
		o.as, o.formats = formatMCP, 1
	}
	if o.as != formatMCP && o.as != formatStdio {
		fmt.Fprintf(e.stderr, "otc %s: only MCP servers have resources and prompts: give an MCP endpoint (--mcp URL) or --stdio COMMAND\n", cmd)
		return nil, nil, nil, exitBadInput
	}
	url, rest := o.target(pos)
	if url == "" && o.as != formatStdio || len(rest) < least || len(rest) > most {
		fmt.Fprintf(e.stderr, "otc %s: want %s, got %d arguments\n", cmd, usage, len(pos))
		return nil, nil, nil, exitBadInput
	}
	srv, err := o.server(ctx, url, e.stderr, more)
	if err != nil {
		return nil, nil, nil, e.serverFailed(cmd, err)
	}
	return srv.c, &o, rest, exitOK
}

// failRead is fail for these commands: the server's JSON-RPC error (an
// invalid argument, a resource nothing is at) is a refusal of the
// request, not a failure to reach the server.
func (e *cli) failRead(cmd string, err error) int {
	if errors.Is(err, client.ErrNotTold) {
		fmt.Fprintf(e.stderr, "otc %s: %s\n", cmd, printable(err.Error()))
		return exitRefused
	}
	var rpc *client.RPCError
	if !errors.As(err, &rpc) {
		return e.fail(cmd, err)
	}
	fmt.Fprintf(e.stderr, "otc %s: %s\n", cmd, printable(rpc.Message))
	var data mcpwire.ErrorData
	_ = json.Unmarshal(rpc.Data, &data)
	if rpc.Code == jsonrpc.CodeInvalidParams && data.URI == "" { // with the URI: SEP-2164's not found
		return exitBadInput
	}
	return exitRefused
}

// resources runs "otc resources URL".
func (e *cli) resources(ctx context.Context, args []string) int {
	c, o, _, code := e.readable(ctx, "resources", args, 0, 0, "URL (or --stdio COMMAND)")
	if c == nil {
		return code
	}
	defer c.Close()
	list, err := c.MCP().ListResources(ctx)
	if err != nil {
		return e.failRead("resources", err)
	}
	if o.json {
		return e.printJSON(list)
	}
	return e.table("URI\tNAME\tTYPE\tDESCRIPTION", len(list), func(w *tabwriter.Writer, i int) {
		r := list[i]
		uri := r.URI
		if uri == "" {
			uri = r.URITemplate
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", printable(uri), printable(r.Name), printable(r.MIMEType), shorten(printable(r.Description), 60))
	})
}

// read runs "otc read URL URI".
func (e *cli) read(ctx context.Context, args []string) int {
	c, o, rest, code := e.readable(ctx, "read", args, 1, 1, "URL (or --stdio COMMAND) and the URI to read")
	if c == nil {
		return code
	}
	defer c.Close()
	contents, err := c.MCP().ReadResource(ctx, rest[0])
	if err != nil {
		return e.failRead("read", err)
	}
	if o.json {
		return e.printJSON(contents)
	}
	for _, ct := range contents {
		if ct.Blob != nil {
			fmt.Fprintf(e.stderr, "otc read: %s is %d bytes of %s, not text: --json prints them in base64\n", printable(ct.URI), len(ct.Blob), printable(ct.MIMEType))
			continue
		}
		fmt.Fprint(e.stdout, ct.Text)
		if !strings.HasSuffix(ct.Text, "\n") {
			fmt.Fprintln(e.stdout)
		}
	}
	return exitOK
}

// prompts runs "otc prompts URL".
func (e *cli) prompts(ctx context.Context, args []string) int {
	c, o, _, code := e.readable(ctx, "prompts", args, 0, 0, "URL (or --stdio COMMAND)")
	if c == nil {
		return code
	}
	defer c.Close()
	list, err := c.MCP().ListPrompts(ctx)
	if err != nil {
		return e.failRead("prompts", err)
	}
	if o.json {
		return e.printJSON(list)
	}
	return e.table("NAME\tARGUMENTS\tDESCRIPTION", len(list), func(w *tabwriter.Writer, i int) {
		p := list[i]
		var as []string
		for _, a := range p.Arguments {
			name := printable(a.Name)
			if a.Required {
				name += "*"
			}
			as = append(as, name)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", printable(p.Name), strings.Join(as, " "), shorten(printable(p.Description), 60))
	})
}

// prompt runs "otc prompt URL NAME key=value…".
func (e *cli) prompt(ctx context.Context, args []string) int {
	c, o, rest, code := e.readable(ctx, "prompt", args, 1, 1<<10, "URL (or --stdio COMMAND), the prompt's NAME and its arguments as key=value")
	if c == nil {
		return code
	}
	defer c.Close()
	values := map[string]string{}
	for _, kv := range rest[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			fmt.Fprintf(e.stderr, "otc prompt: %q is not key=value; \"otc prompts URL\" lists the arguments (* marks the required)\n", kv)
			return exitBadInput
		}
		values[k] = v
	}
	res, err := c.MCP().GetPrompt(ctx, rest[0], values)
	if err != nil {
		return e.failRead("prompt", err)
	}
	if o.json {
		return e.printJSON(res)
	}
	for _, m := range res.Messages {
		text := m.Content.Text
		switch m.Content.Type {
		case "text":
		case "resource":
			text = "[resource " + m.Content.Resource.URI + "]"
			if m.Content.Resource.Text != "" {
				text += "\n" + m.Content.Resource.Text
			}
		default:
			text = fmt.Sprintf("[%s, %d bytes of %s]", m.Content.Type, len(m.Content.Data), m.Content.MIMEType)
		}
		fmt.Fprintf(e.stdout, "%s: %s\n", e.style(styleBold, printable(string(m.Role))), printableText(text))
	}
	return exitOK
}

// table prints n rows under header, in columns, the header in bold.
func (e *cli) table(header string, n int, row func(w *tabwriter.Writer, i int)) int {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, header)
	for i := range n {
		row(w, i)
	}
	_ = w.Flush()
	head, rows, _ := strings.Cut(b.String(), "\n")
	fmt.Fprintf(e.stdout, "%s\n%s", e.style(styleBold, head), rows)
	return exitOK
}

// printable replaces what a terminal would act on (escapes, control
// characters, line breaks) in a server's one-line string.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return '?'
		}
		return r
	}, s)
}

// printableText is printable for text of several lines: it keeps line
// breaks and tabs.
func printableText(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, s)
}

// maxWatched bounds the URIs one watch subscribes to.
const maxWatched = 64

// watch runs "otc watch URL URI…": it subscribes to each URI and prints,
// at each update the server tells of, the URI and its new contents (one
// JSON object a line with --json), until it is interrupted.
func (e *cli) watch(ctx context.Context, args []string) int {
	updates := make(chan string, 64)
	c, o, uris, code := e.readableWith(ctx, "watch", args, 1, maxWatched, "URL (or --stdio COMMAND) and the URIs to watch", func(opts *client.Options) {
		opts.OnNotification = func(method string, params json.RawMessage) {
			var p mcpwire.URIParams
			if method == mcpwire.MethodResourceUpdate && json.Unmarshal(params, &p) == nil {
				select {
				case updates <- p.URI:
				default: // a storm: the next update reads the contents anew
				}
			}
		}
	})
	if c == nil {
		return code
	}
	defer c.Close()
	s := c.MCP()
	for _, uri := range uris {
		if err := s.Subscribe(ctx, uri); err != nil {
			return e.failRead("watch", err)
		}
	}
	fmt.Fprintf(e.stderr, "otc watch: watching %d resource(s) over MCP %s; interrupt to stop\n", len(uris), s.ProtocolVersion())
	for {
		select {
		case <-ctx.Done():
			return exitOK
		case uri := <-updates:
			contents, err := s.ReadResource(ctx, uri)
			if ctx.Err() != nil {
				return exitOK
			}
			if err != nil {
				fmt.Fprintf(e.stderr, "otc watch: %s changed, and reading it failed: %v\n", printable(uri), err)
				continue
			}
			if o.json {
				e.printJSON(map[string]any{"uri": uri, "contents": contents})
				continue
			}
			fmt.Fprintf(e.stdout, "== %s\n", printable(uri))
			for _, ct := range contents {
				if ct.Blob != nil {
					fmt.Fprintf(e.stdout, "(%d bytes of %s)\n", len(ct.Blob), printable(ct.MIMEType))
					continue
				}
				fmt.Fprint(e.stdout, ct.Text)
				if !strings.HasSuffix(ct.Text, "\n") {
					fmt.Fprintln(e.stdout)
				}
			}
		}
	}
}
