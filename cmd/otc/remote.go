package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/mount"
)

// remote is a tool server in whatever format, through the client package.
type remote struct {
	c    *client.Client
	defs []otc.ToolDefinition // the catalog, once read
	keep bool                 // close leaves the client open: it is shared
	// note, when set, is told when the server is slow to answer its
	// first request (the handshake, for MCP); answered once it has.
	note     io.Writer
	answered bool
}

// waitNotice is how long the first request to a server waits before
// otc says on standard error that it is waiting (tests lengthen it).
var waitNotice = 5 * time.Second

// waiting says on r.note, once the first request to the server has
// waited waitNotice, that otc is waiting and for how long it will; the
// returned function ends the wait.
func (r *remote) waiting() (stop func()) {
	if r.answered || r.note == nil {
		return func() {}
	}
	t := time.AfterFunc(waitNotice, func() {
		fmt.Fprintf(r.note, "otc: waiting for the server to answer (%s so far); an MCP server that does not answer the handshake is given up after %s\n",
			waitNotice, client.DefaultHandshakeTimeout)
	})
	return func() { t.Stop() }
}

func (r *remote) list(ctx context.Context) ([]otc.ToolDefinition, error) {
	if r.defs != nil {
		return r.defs, nil
	}
	stop := r.waiting()
	defs, err := r.c.ListTools(ctx)
	stop()
	if err != nil {
		return nil, err
	}
	r.defs, r.answered = defs, true
	return defs, nil
}

func (r *remote) describe(ctx context.Context, tool string) (otc.ToolDefinition, bool, error) {
	defs, err := r.list(ctx)
	if err != nil {
		return otc.ToolDefinition{}, false, err
	}
	d, ok := findTool(defs, tool)
	return d, ok, nil
}

// call calls tool. With d, a --task call, it starts the task and names
// it to d before it waits for the task's end, so that an interrupt at
// any moment of the task's life knows which task it cancelled.
func (r *remote) call(ctx context.Context, tool string, input json.RawMessage, opts *client.CallOptions, d *taskDisplay) (json.RawMessage, string, *otc.ToolError, error) {
	var res *client.Result
	var err error
	stop := r.waiting()
	if d == nil {
		res, err = r.c.Call(ctx, tool, input, opts)
		stop()
	} else {
		var t *client.Task
		t, err = r.c.Start(ctx, tool, input, opts)
		stop()
		if err == nil {
			d.named(t.ID)
			res, err = t.Wait(ctx)
		}
	}
	r.answered = r.answered || err == nil || res != nil
	if te, ok := errors.AsType[*otc.ToolError](err); ok {
		id := ""
		if res != nil {
			id = res.CallID
		}
		return nil, id, te, nil
	}
	if err != nil {
		return nil, "", nil, err
	}
	return res.Value, res.CallID, nil, nil
}

func (r *remote) close() {
	if !r.keep {
		_ = r.c.Close()
	}
}

// options are the client options the flags give, for format f.
func (c *common) options(f client.Format, agent string) *client.Options {
	opts := &client.Options{APIKey: c.apiKey, BearerToken: c.bearer, UserAgent: agent, Format: f}
	if c.jwtSecret != "" {
		opts.JWT = &client.JWTSigner{Secret: []byte(c.jwtSecret), Subject: "otc-cli"}
		opts.BearerToken = ""
	}
	return opts
}

// server returns the server the arguments name: the process of --stdio,
// the URL in the format a flag names, or, when none does, the format
// found there (client.Dial), saying so on note when it is not the URL as
// an OTC server. opts, when not nil, adds to the client's options.
func (c *common) server(ctx context.Context, url string, note io.Writer, more func(*client.Options)) (*remote, error) {
	if c.formats > 1 {
		return nil, errors.New("give one of --mcp, --rest, --a2a and --stdio")
	}
	if c.jwtSecret != "" && c.as != formatOTC {
		return nil, fmt.Errorf("--jwt-secret is for HTTP servers; give %s a token with --bearer", c.as.kind())
	}
	opts := c.options(c.as.wire(), "otc-cli/1.0")
	if more != nil {
		more(opts)
	}
	if c.as == formatStdio {
		words, err := splitCommand(c.stdio)
		if err != nil {
			return nil, fmt.Errorf("--stdio: %w", err)
		}
		opts.Format = ""
		cl, err := client.NewStdio(exec.Command(words[0], words[1:]...), opts)
		if err != nil {
			return nil, err
		}
		return &remote{c: cl, note: note}, nil
	}
	if c.formats == 1 {
		cl, err := client.New(url, opts)
		if err != nil {
			return nil, err
		}
		return &remote{c: cl, note: note}, nil
	}
	opts.Format = ""
	cl, err := client.Dial(ctx, url, opts)
	if nse, ok := errors.AsType[*client.NoServerError](err); ok {
		return nil, &noToolServer{msg: noServerMessage(url, nse)}
	}
	if err != nil {
		return nil, err
	}
	f := fromWire(cl.Format())
	base := strings.TrimSuffix(url, "/")
	switch {
	case cl.URL() == base && f == formatOTC:
	case cl.URL() == base:
		fmt.Fprintf(note, "otc: %s is %s, not an OTC server; going on as with %s(give it to skip this check)\n", url, f.kind(), f.flag())
	default:
		fmt.Fprintf(note, "otc: %s is not a tool server, but %s is %s; going on with that URL (give %s%s next time)\n", url, cl.URL(), f.kind(), f.flag(), cl.URL())
	}
	c.as, c.formats = f, 1
	return &remote{c: cl, note: note}, nil
}

// noServerMessage says that nothing at url answers as a tool server:
// what its OTC catalog's URL answered, where else the command looked,
// and what to give instead.
func noServerMessage(url string, nse *client.NoServerError) string {
	answered := "nothing a tool server answers"
	for _, a := range nse.Tried {
		if re, ok := errors.AsType[*client.ResponseError](a.Err); ok && a.Format == client.FormatOTC {
			answered = fmt.Sprintf("GET %s answered %s, not an OTC catalog", re.URL, strings.TrimSpace(fmt.Sprintf("%d %s", re.StatusCode, http.StatusText(re.StatusCode))))
			break
		}
	}
	base := strings.TrimSuffix(url, "/")
	return fmt.Sprintf("no tool server answers at %s: %s, and no MCP endpoint, REST view or A2A agent answers there or at %s, %s, %s or %s. "+
		"Give the URL the server's OTC handler is mounted at, or --mcp, --rest or --a2a with the URL of its MCP endpoint, REST view or A2A agent",
		url, answered, base+mount.PrefixOTC, base+mount.PrefixMCP, base+mount.PrefixREST, base+mount.PrefixA2A)
}

// splitCommand splits a command line into words as a POSIX shell would
// (blanks separate words; single quotes keep everything, double quotes
// all but a backslash before ", \, $ and `; a backslash outside quotes
// keeps the next character), without expanding anything: --stdio runs
// the command itself, never a shell.
func splitCommand(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case ch == '\\':
			inWord = true
			if i+1 < len(s) {
				i++
				if s[i] != '\n' {
					w.WriteByte(s[i])
				}
			}
		case ch == '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("a single quote is not closed")
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case ch == '"':
			inWord = true
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("a double quote is not closed")
			}
		default:
			inWord = true
			w.WriteByte(ch)
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	if len(words) == 0 {
		return nil, errors.New("no command to run")
	}
	return words, nil
}
