//go:build linux

// Command wild puts otc gateway in front of the public MCP servers of
// servers.txt, as people run them, and reports what it served: first each
// server alone (its protocol version, its tools and the time it took to
// list them, through the client over stdio), then all of them behind one
// gateway (the time each took to come up in its health, the tools served,
// the gateway's memory), and last what was left running after the gateway
// was sent SIGTERM. It fails when a server that lists its tools alone is
// not served by the gateway, or when a process is left.
//
// It is a long run, behind make wild (.ci/wild.sh installs the servers
// with npm first), on Linux (it reads /proc):
//
//	go run ./wild --modules DIR [--node PATH] [--wait 3m] [--out FILE]
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/federation"
)

// server is one line of servers.txt.
type server struct {
	Package, Version, Name string
	Args                   []string
	Env                    []string // NAME=value, beside the program's own
	Command                []string // node, the package's program, Args

	// Alone.
	Protocol   string
	Tools      int
	ListedIn   time.Duration
	AloneError string
	// Behind the gateway.
	State      string
	Served     int
	Skipped    []string // the tools the gateway left out, each with why
	UpIn       time.Duration
	GatewayErr string
}

func main() {
	modules := flag.String("modules", "", "the folder npm installed the servers in (its node_modules below it)")
	node := flag.String("node", "node", "the node binary")
	list := flag.String("servers", filepath.Join("wild", "servers.txt"), "the list of servers")
	wait := flag.Duration("wait", 3*time.Minute, "how long the gateway is given to bring every server up")
	out := flag.String("out", "", "a file to write the report to, beside standard output")
	catalog := flag.String("catalog", "", "a file to write the gateway's catalog to, as its MCP endpoint lists it in full (JSON, one tool a line; gzipped when the name ends in .gz)")
	flag.Parse()
	if *modules == "" {
		fail(errors.New("--modules is required: the folder .ci/wild.sh prints"))
	}
	scratch, err := os.MkdirTemp("", "otc-wild-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(scratch)
	servers, err := readServers(*list, *modules, *node, scratch)
	if err != nil {
		fail(err)
	}
	for _, s := range servers {
		alone(s)
		fmt.Fprintf(os.Stderr, "alone: %-12s %-10s %3d tools in %6s %s\n", s.Name, s.Protocol, s.Tools, s.ListedIn.Round(time.Millisecond), s.AloneError)
	}
	memory, left, err := gateway(servers, scratch, *wait, *modules, *catalog)
	if err != nil {
		fail(err)
	}
	report := render(servers, memory, left)
	fmt.Print(report)
	if *out != "" {
		if err := os.WriteFile(*out, []byte(report), 0o644); err != nil {
			fail(err)
		}
	}
	bad := len(left) > 0
	for _, s := range servers {
		if s.AloneError == "" && s.State != "up" {
			bad = true
		}
	}
	if bad {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "wild:", err)
	os.Exit(2)
}

// envWord is a word of servers.txt that sets an environment variable.
var envWord = regexp.MustCompile(`^[A-Z][A-Z0-9_]*=`)

// readServers reads servers.txt and finds each package's program.
func readServers(list, modules, node, scratch string) ([]*server, error) {
	b, err := os.ReadFile(list)
	if err != nil {
		return nil, err
	}
	var out []*server
	for n, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) < 2 {
			return nil, fmt.Errorf("%s:%d: a package@version and a name", list, n+1)
		}
		at := strings.LastIndex(f[0], "@")
		if at <= 0 {
			return nil, fmt.Errorf("%s:%d: %q is not package@version", list, n+1, f[0])
		}
		s := &server{Package: f[0][:at], Version: f[0][at+1:], Name: f[1]}
		dir := filepath.Join(scratch, s.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		for _, a := range f[2:] {
			a = strings.ReplaceAll(strings.ReplaceAll(a, "$DIR", dir), "$KEY", "placeholder")
			if envWord.MatchString(a) {
				s.Env = append(s.Env, a)
			} else {
				s.Args = append(s.Args, a)
			}
		}
		bin, err := program(filepath.Join(modules, "node_modules", s.Package))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", list, n+1, err)
		}
		s.Command = append([]string{node, bin}, s.Args...)
		out = append(out, s)
	}
	return out, nil
}

// program is the file a package's bin names: its only entry, or the
// entry named after the package.
func program(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return "", fmt.Errorf("the package is not installed: %w", err)
	}
	var p struct {
		Name string          `json:"name"`
		Bin  json.RawMessage `json:"bin"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return "", err
	}
	var one string
	if json.Unmarshal(p.Bin, &one) == nil && one != "" {
		return filepath.Join(dir, one), nil
	}
	var many map[string]string
	if err := json.Unmarshal(p.Bin, &many); err != nil || len(many) == 0 {
		return "", fmt.Errorf("%s names no program (bin)", p.Name)
	}
	keys := make([]string, 0, len(many))
	for k := range many {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	pick := keys[0]
	base := p.Name[strings.LastIndex(p.Name, "/")+1:]
	for _, k := range keys {
		if k == base {
			pick = k
		}
	}
	return filepath.Join(dir, many[pick]), nil
}

// aloneWait bounds how long a server alone is given to answer its
// handshake and list its tools (a server that waits on a network it
// cannot reach may never answer).
const aloneWait = time.Minute

// alone lists a server's tools through the client over stdio, and asks
// it its protocol version.
func alone(s *server) {
	s.Protocol = version(s)
	cmd := exec.Command(s.Command[0], s.Command[1:]...)
	cmd.Env = append(serverEnv(), s.Env...)
	began := time.Now()
	c, err := client.NewStdio(cmd, &client.Options{HandshakeTimeout: aloneWait})
	if err != nil {
		s.AloneError = err.Error()
		return
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), aloneWait)
	defer cancel()
	defs, err := c.ListTools(ctx)
	if err != nil {
		s.AloneError = short(err.Error())
		return
	}
	s.Tools, s.ListedIn = len(defs), time.Since(began)
}

// serverEnv is the environment each server runs with, as otc gateway
// starts it: the minimal one (PATH, HOME, the locale; none of the
// developer's credentials), and what keeps a server from downloading a
// browser.
func serverEnv() []string {
	return append(federation.MinimalEnv(), serverExtras...)
}

// serverExtras are set for every server, alone and behind the gateway.
var serverExtras = []string{"PUPPETEER_SKIP_DOWNLOAD=1", "NODE_NO_WARNINGS=1"}

// version asks the server initialize, at the latest version with
// sessions, and returns the version it answers.
func version(s *server) string {
	ctx, cancel := context.WithTimeout(context.Background(), aloneWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.Command[0], s.Command[1:]...)
	cmd.Env = append(serverEnv(), s.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return "?"
	}
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}()
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"otc-wild","version":"1"}}}`)
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &m) == nil && string(m.ID) == "1" {
			return m.Result.ProtocolVersion
		}
	}
	return "?"
}

// gateway runs otc gateway in front of every server, and waits for each
// to come up; then sends it SIGTERM and lists what is left running.
func gateway(servers []*server, scratch string, wait time.Duration, modules, catalog string) (rss string, left []string, err error) {
	bin := filepath.Join(scratch, "otc")
	build := exec.Command("go", "build", "-o", bin, "github.com/otcgo/otc/cmd/otc")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return "", nil, fmt.Errorf("building otc: %w", err)
	}
	var cfg bytes.Buffer
	cfg.WriteString("upstreams:\n")
	for _, s := range servers {
		cmd, _ := json.Marshal(s.Command)
		env := map[string]string{}
		for _, e := range append(slices.Clone(serverExtras), s.Env...) {
			k, v, _ := strings.Cut(e, "=")
			env[k] = v
		}
		envJSON, _ := json.Marshal(env)
		fmt.Fprintf(&cfg, "  - name: %s\n    mcp: {command: %s, env: %s}\n", s.Name, cmd, envJSON)
	}
	config := filepath.Join(scratch, "gateway.yaml")
	if err := os.WriteFile(config, cfg.Bytes(), 0o644); err != nil {
		return "", nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr := l.Addr().String()
	l.Close()
	const key = "wild-key"
	gw := exec.Command(bin, "gateway", "--config", config, "--addr", addr)
	gw.Env = append(os.Environ(), "OTC_API_KEY="+key) // its servers get a minimal one (federation.MinimalEnv)
	gw.Stdout, gw.Stderr = io.Discard, io.Discard
	began := time.Now()
	if err := gw.Start(); err != nil {
		return "", nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- gw.Wait() }()
	byName := map[string]*server{}
	for _, s := range servers {
		byName[s.Name] = s
	}
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
		rows, err := health(addr, key)
		if err != nil {
			continue
		}
		all := true
		for _, r := range rows {
			s := byName[r.Name]
			if s == nil {
				continue
			}
			s.State, s.Served, s.Skipped, s.GatewayErr = r.State, r.Tools, r.Skipped, short(r.LastError)
			if r.State == "up" && s.UpIn == 0 {
				s.UpIn = time.Since(began)
			}
			if r.State != "up" && s.AloneError == "" {
				all = false
			}
		}
		if all && len(rows) == len(servers) {
			break
		}
	}
	rss = memory(gw.Process.Pid)
	if catalog != "" {
		if err := writeCatalog(catalog, "http://"+addr+"/mcp", key); err != nil {
			fmt.Fprintln(os.Stderr, "wild: the catalog:", err)
		}
	}
	_ = gw.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		_ = gw.Process.Kill()
		<-exited
		left = append(left, "otc gateway itself, 30 s after SIGTERM")
	}
	time.Sleep(time.Second)
	for _, p := range running(filepath.Join(modules, "node_modules")) {
		left = append(left, p.line)
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
	return rss, left, nil
}

type row struct {
	Name      string   `json:"name"`
	State     string   `json:"state"`
	Tools     int      `json:"tools"`
	LastError string   `json:"last_error"`
	Skipped   []string `json:"skipped"`
}

func health(addr, key string) ([]row, error) {
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/federation/health", nil)
	req.Header.Set(otc.HeaderAPIKey, key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Upstreams []row `json:"upstreams"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	return body.Upstreams, nil
}

// memory is a process's resident memory, from /proc.
func memory(pid int) string {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.Fields(v)[0])
			return fmt.Sprintf("%d MB", kb/1024)
		}
	}
	return "?"
}

type proc struct {
	pid  int
	line string
}

// running lists the processes whose command line names a file below dir
// (the servers' node_modules: not this program, whose --modules names its
// parent).
func running(dir string) []proc {
	var out []proc
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(b, []byte(dir)) {
			continue
		}
		out = append(out, proc{pid, fmt.Sprintf("%d: %s", pid, short(strings.ReplaceAll(string(b), "\x00", " ")))})
	}
	return out
}

func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}

// render writes the report as Markdown.
func render(servers []*server, rss string, left []string) string {
	var b strings.Builder
	listed, served, tools := 0, 0, 0
	for _, s := range servers {
		if s.AloneError == "" {
			listed++
		}
		if s.State == "up" {
			served++
			tools += s.Served
		}
	}
	fmt.Fprintf(&b, "%d servers; %d list their tools alone; the gateway served %d of them (%d tools), at %s of memory.\n\n", len(servers), listed, served, tools, rss)
	b.WriteString("\"Up after\" counts from the gateway's start to the first reading of its health that shows the server up; the health page lists the upstreams once the start timeout (10 s) has passed or all are up, so the first readings are bounded below by that.\n\n")
	b.WriteString("| upstream | package | version | alone: tools, time | gateway: state, tools, up after |\n| --- | --- | --- | --- | --- |\n")
	for _, s := range servers {
		a := fmt.Sprintf("%d, %s", s.Tools, s.ListedIn.Round(100*time.Millisecond))
		if s.AloneError != "" {
			a = "fails: " + s.AloneError
		}
		g := fmt.Sprintf("%s, %d, %s", s.State, s.Served, s.UpIn.Round(100*time.Millisecond))
		if len(s.Skipped) > 0 {
			g += fmt.Sprintf(" (%d left out: %s)", len(s.Skipped), short(s.Skipped[0]))
		}
		if s.State != "up" {
			g = fmt.Sprintf("%s: %s", s.State, s.GatewayErr)
		}
		fmt.Fprintf(&b, "| %s | %s@%s | %s | %s | %s |\n", s.Name, s.Package, s.Version, s.Protocol, a, g)
	}
	if len(left) == 0 {
		b.WriteString("\nNothing was left running after SIGTERM.\n")
	} else {
		b.WriteString("\nLeft running after SIGTERM:\n")
		for _, l := range left {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	return b.String()
}

// writeCatalog writes the tools the gateway's MCP endpoint lists in full
// (as otc's client lists them) to file: a JSON array, one MCP Tool object
// a line, sorted by name, for the search's measurements (search/testdata).
func writeCatalog(file, url, key string) error {
	c, err := client.New(url, &client.Options{Format: client.FormatMCP, APIKey: key})
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	defs, err := c.ListTools(ctx)
	if err != nil {
		return err
	}
	slices.SortFunc(defs, func(a, b otc.ToolDefinition) int { return strings.Compare(a.Name, b.Name) })
	var b bytes.Buffer
	b.WriteString("[\n")
	for i, d := range defs {
		line, err := json.Marshal(struct {
			Name        string               `json:"name"`
			Title       string               `json:"title,omitempty"`
			Description string               `json:"description"`
			InputSchema json.RawMessage      `json:"inputSchema"`
			Annotations *otc.ToolAnnotations `json:"annotations,omitempty"`
			Meta        json.RawMessage      `json:"_meta,omitempty"`
		}{d.Name, d.Title, d.Description, d.InputSchema.Parameters, d.Annotations, d.Meta})
		if err != nil {
			return err
		}
		b.Write(line)
		if i < len(defs)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]\n")
	out := b.Bytes()
	if strings.HasSuffix(file, ".gz") { // as search/testdata keeps it: under the 1 MiB a tracked file may hold
		var z bytes.Buffer
		w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		_, _ = w.Write(out)
		if err := w.Close(); err != nil {
			return err
		}
		out = z.Bytes()
	}
	return os.WriteFile(file, out, 0o644)
}
