package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

// Exit codes.
const (
	exitOK        = 0
	exitToolError = 1
	exitBadInput  = 2
	exitRefused   = 3
	exitTransport = 4
	// exitInput: the tool asked something otc could not answer (a
	// question for its user without a terminal, or with --json).
	exitInput = 6
	// exitBusy: the server refused the call for now (a rate limit, a
	// server too busy or going away); it says when to try again.
	exitBusy = 7
	// exitInterrupted: Ctrl-C ended the command (after cancelling the
	// task of otc call --task).
	exitInterrupted = 130
)

func main() {
	// Ctrl-C, and SIGTERM (a service manager's stop): the command ends as
	// it does on Ctrl-C, and otc gateway stops its upstreams' processes.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	t := terminal(isTerminal(os.Stdout), isTerminal(os.Stderr), os.Getenv)
	t.prompt = isTTY(os.Stdin)
	os.Exit(runOn(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv, t))
}

// isTerminal reports whether f is a terminal (a character device).
func isTerminal(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// terminalFeatures are what the output may do beyond plain text.
type terminalFeatures struct {
	color   bool // ANSI colour on standard output and error
	spinner bool // a spinner on standard error while a call takes long
	prompt  bool // standard input is a terminal: otc may ask its user
	// stdoutTTY and stderrTTY say which outputs are terminals: what a
	// server says is written to them made harmless (termSafe).
	stdoutTTY, stderrTTY bool
}

// terminal decides the features: colour only when both outputs are
// terminals and NO_COLOR is not set (https://no-color.org), the spinner
// whenever standard error is a terminal.
func terminal(stdoutTTY, stderrTTY bool, getenv func(string) string) terminalFeatures {
	return terminalFeatures{
		color:     stdoutTTY && stderrTTY && getenv("NO_COLOR") == "",
		spinner:   stderrTTY,
		stdoutTTY: stdoutTTY,
		stderrTTY: stderrTTY,
	}
}

// run runs one command, without terminal features, and returns its exit
// code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	return runOn(ctx, args, stdin, stdout, stderr, getenv, terminalFeatures{})
}

func runOn(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string, t terminalFeatures) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitBadInput
	}
	env := &cli{stdin: stdin, stdout: stdout, stderr: stderr, rawStdout: stdout, getenv: getenv, term: t}
	if t.stdoutTTY {
		env.stdout = termSafe{stdout}
	}
	if t.stderrTTY {
		env.stderr = termSafe{stderr}
	}
	switch args[0] {
	case "tools":
		return env.tools(ctx, args[1:])
	case "call":
		return env.call(ctx, args[1:])
	case "check":
		return env.check(ctx, args[1:])
	case "inspect":
		return env.inspect(ctx, args[1:])
	case "gateway":
		return env.gateway(ctx, args[1:])
	case "resources":
		return env.resources(ctx, args[1:])
	case "read":
		return env.read(ctx, args[1:])
	case "prompts":
		return env.prompts(ctx, args[1:])
	case "prompt":
		return env.prompt(ctx, args[1:])
	case "watch":
		return env.watch(ctx, args[1:])
	case "skills":
		return env.skills(ctx, args[1:])
	case "skill":
		return env.skill(ctx, args[1:])
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "otc: unknown command %q\n\n%s", args[0], usage)
	return exitBadInput
}

// cli is where a command reads and writes.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// rawStdout is standard output as it is, for --json: stdout may be a
	// terminal's, made safe.
	rawStdout io.Writer
	getenv    func(string) string
	term      terminalFeatures
	in        *bufio.Reader // stdin, for prompts; made on first use
	// taskNamed, when set, is called once a --task call's server has
	// named its task: the moment tests interrupt a call at.
	taskNamed func(id string)
}

// reader returns standard input, buffered once for every prompt.
func (e *cli) reader() *bufio.Reader {
	if e.in == nil {
		e.in = bufio.NewReader(e.stdin)
	}
	return e.in
}

// ANSI styles.
const (
	styleBold  = "\x1b[1m"
	styleRed   = "\x1b[31m"
	styleReset = "\x1b[0m"
)

// style wraps s in an ANSI style when colour is on.
func (e *cli) style(code, s string) string {
	if !e.term.color {
		return s
	}
	return code + s + styleReset
}

// spinText shows a spinner on standard error after a second (or at once
// when set changes its text: a call's progress), until stop is called,
// when the line is cleared; on a terminal only.
func (e *cli) spinText(what string) (stop func(), set func(string)) {
	if !e.term.spinner {
		return func() {}, func(string) {}
	}
	var text atomic.Pointer[string]
	text.Store(&what)
	done, finished, changed := make(chan struct{}), make(chan struct{}), make(chan struct{}, 1)
	go func() {
		defer close(finished)
		wait := time.NewTimer(time.Second)
		defer wait.Stop()
		select {
		case <-done:
			return
		case <-wait.C:
		case <-changed:
		}
		frames := []string{"|", "/", "-", "\\"}
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			fmt.Fprintf(e.stderr, "\r\x1b[K%s %s", frames[i%len(frames)], *text.Load())
			select {
			case <-done:
				fmt.Fprint(e.stderr, "\r\x1b[K")
				return
			case <-tick.C:
			case <-changed:
			}
		}
	}()
	return func() {
			close(done)
			<-finished
		}, func(s string) {
			text.Store(&s)
			select {
			case changed <- struct{}{}:
			default:
			}
		}
}

const usage = `otc lists and calls the tools of an OTC/OXP tool server.

Usage:
  otc tools URL [TOOL] [--json] [--mcp | --rest | --a2a]
  otc tools URL --search WORDS [--limit N] [--json]   (OTC servers that search, MCP servers in search mode)
  otc call URL TOOL [JSON | key=value ... | -i FILE | -] [options]
  otc call --mcp --task URL TOOL [input] [options]
  otc call --a2a --task URL SKILL [input] [options]
  otc check URL [--tool ID --input JSON] [--max-body MiB] [credentials] [--json]
  otc inspect [URL] [--mcp URL] [--rest URL] [--addr HOST:PORT] [--no-open] [credentials]
  otc gateway --config FILE [--addr HOST:PORT | --stdio] [--strict]
  otc resources URL [--json]        (MCP: URL is the endpoint, or --stdio)
  otc read URL URI [--json]
  otc prompts URL [--json]
  otc prompt URL NAME [key=value ...] [--json]
  otc watch URL URI... [--json]      (each update of the resources, until interrupted)
  otc skills URL [--json]           (MCP's skills extension)
  otc skill URL NAME [--out DIR] [--json]   (its SKILL.md, or every file below DIR/NAME, verified)

URL is an OTC/OXP server (its base URL); with --mcp an MCP endpoint
(Streamable HTTP, such as http://127.0.0.1:8080/mcp); with --rest the base
of a REST tool API (such as http://127.0.0.1:8080/v1); with --a2a an A2A
agent (such as http://127.0.0.1:8080/a2a).

Examples:
  otc tools http://127.0.0.1:8080
  otc tools http://127.0.0.1:8080 Calculator.Add
  otc tools http://127.0.0.1:8080 --search "add two numbers" --limit 3
  otc call http://127.0.0.1:8080 Calculator.Add '{"a":10,"b":5}'
  otc call http://127.0.0.1:8080 Calculator.Add a=10 b=5
  echo '{"message":"hi"}' | otc call http://127.0.0.1:8080 Signer.Sign - --secret SIGNING_KEY=k
  otc call http://127.0.0.1:8080 Counter.Increment --call-id 7d9f4a52 --json
  otc tools --mcp http://127.0.0.1:8080/mcp
  otc call --mcp http://127.0.0.1:8080/mcp Calculator_Add a=1 b=2
  otc call --rest http://127.0.0.1:8080/v1 Calculator_Add a=1 b=2
  otc call --a2a http://127.0.0.1:8080/a2a Calculator_Add a=1 b=2
  otc check http://127.0.0.1:8080 --tool Calculator.Add@1.0.0 --input '{"a":1,"b":2}'
  otc inspect http://127.0.0.1:8080 --mcp http://127.0.0.1:8080/mcp --rest http://127.0.0.1:8080/v1
  otc resources http://127.0.0.1:8080/mcp
  otc read http://127.0.0.1:8080/mcp 'calc://tables/multiply/7?upto=3'
  otc prompt http://127.0.0.1:8080/mcp explain_expression expression='1 + 2 * 3'

Call options:
  -i FILE              read the input from FILE ("-" for standard input)
  --call-id ID         the call's id; a retry with the same id is not run twice
  --secret ID=VALUE    a secret the tool requires; --secret ID reads it from $ID
  --user-id ID         the user the call acts for
  --api-key KEY        sent as OXP-API-Key (default: $OTC_API_KEY)
  --bearer TOKEN       sent as Authorization: Bearer (default: $OTC_BEARER_TOKEN)
  --jwt-secret SECRET  sign an HS256 token for each request (OTC only)
  --json               print the raw answer as JSON
  --mcp                URL is an MCP endpoint; tools are named by name
  --rest               URL is a REST tool API; tools are named by name
  --a2a                URL is an A2A agent; tools are its skills, by name
  --task               with --mcp: call at MCP 2026-07-28 with the tasks
                       extension; with --a2a: ask the agent for a task at
                       once; then poll the task to its end (Ctrl-C
                       cancels it)

Questions from the tool (MCP): a tool may ask its user something in the
middle of a call (an elicitation). On a terminal otc shows the question
and the fields of its form on standard error and reads the answers; with
--json, or when standard input is not a terminal, it cannot ask, and the
call fails with exit code 6. A request for a model's completion
(sampling) is declined: otc has no model.

Check:
  otc check runs the protocol's rules against an OTC/OXP 1.0 server: the
  catalog's shape, every error class with its status and body, the $schema
  spellings, the body limit, unknown fields, /health, and authentication
  when credentials are given; with --tool, calls by each spelling of its
  id and a 422 for input its schema refuses. It calls no tool unless you
  name one with --tool (and its --input): every other request is one a
  conforming server refuses before any tool runs.

Inspect:
  otc inspect serves a page, on 127.0.0.1 only, to browse the tools of the
  servers given (URL over OTC/OXP, --mcp, --rest: one or several), fill in
  a call with a form and see what comes back. It prints the page's URL,
  http://127.0.0.1:PORT/?token=..., on a line of its own and opens it
  unless --no-open is given. The page and its API need the URL's token;
  calls go only to the servers given, with the credentials given here,
  which the page never sees.

Gateway:
  otc gateway serves the tools of the upstreams a configuration file names
  (OTC, REST, MCP over HTTP or as a process, A2A) from one registry, over
  every format at the paths of mount.All (/otc, /mcp, /v1, /registry,
  /a2a), with each upstream's state at /federation/health. It listens on
  127.0.0.1:8088 unless --addr says otherwise. OTC_API_KEY, OTC_JWT_SECRET
  (with OTC_JWT_AUDIENCE) and OTC_RATE_LIMIT set its own authentication
  and rate limit, as for the example server. See docs/federation.md.

Exit codes:
  0 success, 1 the tool returned an error, 2 bad input,
  3 the server refused the call, 4 transport failure or not the protocol,
  5 otc check found a failure, 6 the tool asked a question otc could not
  put to its user, 7 the server refused the call for now (rate limited,
  busy: try again later), 130 interrupted (Ctrl-C)
`
