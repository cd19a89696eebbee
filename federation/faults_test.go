package federation_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/federation"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/mount"
	"github.com/otcgo/otc/resource"
)

// stdioServerEnv makes the test binary an MCP server over stdio: the
// stdio upstream of these tests, a process no test shares with another.
const stdioServerEnv = "FEDERATION_TEST_STDIO_SERVER"

// slowStartEnv makes the stdio server wait that long before it serves;
// slowStartsEnv names a file it notes each of its starts in.
const (
	slowStartEnv  = "FEDERATION_TEST_SLOW_START"
	slowStartsEnv = "FEDERATION_TEST_STARTS"
)

func TestMain(m *testing.M) {
	switch os.Getenv(stdioServerEnv) {
	case "deaf":
		deafServer()
	case "hostile":
		hostileServer()
	}
	if os.Getenv(stdioServerEnv) == "1" {
		// A slow starter: it notes its start, then takes its time.
		if f := os.Getenv(slowStartsEnv); f != "" {
			if out, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				fmt.Fprintln(out, os.Getpid())
				out.Close()
			}
		}
		if d, err := time.ParseDuration(os.Getenv(slowStartEnv)); err == nil {
			time.Sleep(d)
		}
		os.Exit(serveStdio())
	}
	os.Exit(m.Run())
}

type exitIn struct {
	Code int `json:"code" jsonschema:"description=The exit status."`
}

// serveStdio serves Process.Count (how many calls this process has
// answered, and its pid) and Process.Exit (which ends the process).
func serveStdio() int {
	reg := otc.NewRegistry(nil)
	var n atomic.Int64
	_ = otc.Register(reg, otc.Tool{ID: "Process.Count", Version: "1.0.0", Description: "Counts this process's calls."},
		func(context.Context, otc.NoOutput) (string, error) {
			return fmt.Sprintf("%d:%d", os.Getpid(), n.Add(1)), nil
		})
	_ = otc.Register(reg, otc.Tool{ID: "Process.Env", Version: "1.0.0", Description: "Lists this process's environment."},
		func(context.Context, otc.NoOutput) ([]string, error) { return os.Environ(), nil })
	_ = otc.Register(reg, otc.Tool{ID: "Process.Exit", Version: "1.0.0", Description: "Ends this process."},
		func(_ context.Context, in exitIn) (string, error) {
			os.Exit(in.Code)
			return "", nil
		})
	_ = otc.Register(reg, otc.Tool{ID: "Process.Ask", Version: "1.0.0", Description: "Asks your name over stdio, then greets you."},
		func(ctx context.Context, _ otc.NoOutput) (string, error) {
			var a nameAnswer
			action, err := otc.Elicit(ctx, "What is your name?", &a)
			if err != nil {
				return "", err
			}
			if action != otc.ElicitAccept {
				return "no name given", nil
			}
			return "hello " + a.Name, nil
		})
	state, _ := resource.Register(reg, resource.Resource{URI: "proc://state", Name: "state"},
		func(context.Context) (string, error) { return fmt.Sprintf("%d calls", n.Load()), nil })
	_ = otc.Register(reg, otc.Tool{ID: "Process.Touch", Version: "1.0.0", Description: "Says proc://state changed."},
		func(context.Context, otc.NoOutput) (otc.NoOutput, error) { state.Changed(); return otc.NoOutput{}, nil })
	if err := mcp.ServeStdio(context.Background(), reg, nil); err != nil {
		return 1
	}
	return 0
}

func stdioUpstream(t *testing.T, name string) federation.Upstream {
	exe, err := os.Executable()
	require.NoError(t, err)
	return federation.Upstream{Name: name, Command: []string{exe, "-test.run=^$"}, Env: append(os.Environ(), stdioServerEnv+"=1")}
}

// TestFederation_DeadUpstream: an upstream that is gone answers at once
// with a retryable error, opens its breaker, is reported down, and the
// other upstream is served as before; when it comes back, its calls go
// through again.
func TestFederation_DeadUpstream(t *testing.T) {
	live, dying := newOrigin(t), newOrigin(t)
	fed, base, _ := gateway(t, []federation.Upstream{
		{Name: "live", URL: live.url, Format: client.FormatOTC},
		{Name: "dying", URL: dying.url, Format: client.FormatOTC, Breaker: federation.Breaker{Failures: 2, Cooldown: 2 * time.Second}, Timeouts: federation.Timeouts{Refresh: time.Hour}},
	}, nil)
	cl, err := client.New(base+"/otc", nil)
	require.NoError(t, err)
	ctx := context.Background()

	// Kill it: the listener goes, and connections are refused.
	addr := dying.srv.Listener.Addr().String()
	dying.srv.CloseClientConnections()
	dying.srv.Close()

	for i := range 3 {
		start := time.Now()
		_, err := cl.Call(ctx, "dying.Echo_Say", echoIn{Text: "x"}, nil)
		var te *otc.ToolError
		require.True(t, errors.As(err, &te), "call %d: %v", i, err)
		assert.True(t, te.CanRetry, "call %d", i)
		assert.Contains(t, te.Message, "dying")
		assert.Less(t, time.Since(start), 10*time.Second, "call %d answered at once, not at its call timeout (60 s)", i)
	}
	h := healthOf(fed, "dying")
	assert.Equal(t, federation.StateDown, h.State)
	assert.Equal(t, 3, h.Tools, "a dead upstream's tools stay listed")

	// The breaker opens (the calls' failures and the background's
	// attempts to reach it count): the answer says when to come back.
	var te *otc.ToolError
	require.Eventually(t, func() bool {
		_, err = cl.Call(ctx, "dying.Echo_Say", echoIn{Text: "x"}, nil)
		return errors.As(err, &te) && strings.Contains(te.Message, "not answering just now")
	}, 5*time.Second, 20*time.Millisecond, "last: %v", err)
	assert.Positive(t, te.RetryAfter)

	res, err := cl.Call(ctx, "live.Echo_Say", echoIn{Text: "still here"}, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `"still here"`, string(res.Value))
	assert.Equal(t, federation.StateUp, healthOf(fed, "live").State)

	// It comes back on the same address.
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	back := &http.Server{Handler: otc.NewHandler(dying.reg, nil)}
	go back.Serve(ln)
	defer back.Close()
	require.Eventually(t, func() bool {
		res, err := cl.Call(ctx, "dying.Echo_Say", echoIn{Text: "back"}, nil)
		return err == nil && string(res.Value) == `"back"`
	}, 10*time.Second, 100*time.Millisecond)
}

func healthOf(fed *federation.Federation, name string) federation.Health {
	for _, h := range fed.Health() {
		if h.Name == name {
			return h
		}
	}
	return federation.Health{}
}

// TestFederation_Blackholed: an upstream that accepts and never answers
// costs a call its timeout: the gateway gives up the upstream request and
// answers, retryable.
func TestFederation_Blackholed(t *testing.T) {
	o := newOrigin(t)
	var hold atomic.Bool
	gaveUp := make(chan struct{}, 1)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hold.Load() {
			_, _ = io.Copy(io.Discard, r.Body) // so that the server sees the client go
			<-r.Context().Done()
			gaveUp <- struct{}{}
			return
		}
		otc.NewHandler(o.reg, nil).ServeHTTP(w, r)
	}))
	defer front.Close()
	const timeout = 400 * time.Millisecond
	_, base, _ := gateway(t, []federation.Upstream{{Name: "calc", URL: front.URL, Format: client.FormatOTC, Timeouts: federation.Timeouts{Call: timeout}}}, nil)
	cl, err := client.New(base+"/otc", nil)
	require.NoError(t, err)
	hold.Store(true)
	start := time.Now()
	_, err = cl.Call(context.Background(), "calc.Echo_Say", echoIn{Text: "x"}, nil)
	took := time.Since(start)
	var te *otc.ToolError
	require.True(t, errors.As(err, &te), "%v", err)
	assert.True(t, te.CanRetry)
	assert.GreaterOrEqual(t, took, timeout)
	assert.Less(t, took, 10*time.Second, "answered at the call timeout, not left waiting")
	select {
	case <-gaveUp:
	case <-time.After(10 * time.Second):
		t.Fatal("the gateway never gave up the upstream request")
	}
}

// TestFederation_Upstream401: an upstream that refuses the gateway's
// credentials answers the caller with a tool error that says so (not
// retryable), and the catalog read that fails keeps the last good one.
func TestFederation_Upstream401(t *testing.T) {
	o := newOrigin(t)
	var refuse atomic.Bool
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refuse.Load() {
			w.Header().Set("WWW-Authenticate", `Bearer realm="origin"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"$schema":"otc://1.0","message":"Invalid credentials"}`))
			return
		}
		otc.NewHandler(o.reg, nil).ServeHTTP(w, r)
	}))
	defer front.Close()
	fed, base, _ := gateway(t, []federation.Upstream{{Name: "calc", URL: front.URL, Format: client.FormatOTC, Credentials: federation.Credentials{BearerToken: "expired"}}}, nil)
	cl, err := client.New(base+"/otc", nil)
	require.NoError(t, err)
	refuse.Store(true)
	_, err = cl.Call(context.Background(), "calc.Echo_Say", echoIn{Text: "x"}, nil)
	var te *otc.ToolError
	require.True(t, errors.As(err, &te), "%v", err)
	assert.False(t, te.CanRetry)
	assert.Contains(t, te.Message, "refused this gateway's credentials")

	require.Error(t, fed.Refresh(context.Background(), "calc"))
	h := healthOf(fed, "calc")
	assert.Equal(t, 3, h.Tools, "the last good catalog is kept")
	assert.Equal(t, federation.StateDegraded, h.State)
	assert.Contains(t, h.LastError, "401")
}

// TestFederation_StartTimeout: Mount does not wait on an upstream beyond
// its start timeout, and its tools appear when it answers.
func TestFederation_StartTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close() // nothing listens there yet
	o := newOrigin(t)
	start := time.Now()
	fed, _, reg := gateway(t, []federation.Upstream{
		{Name: "late", URL: "http://" + addr, Format: client.FormatOTC, Timeouts: federation.Timeouts{Start: time.Second}},
		{Name: "late2", URL: "http://" + addr, Format: client.FormatOTC, Timeouts: federation.Timeouts{Start: time.Second}},
		{Name: "late3", URL: "http://" + addr, Format: client.FormatOTC, Timeouts: federation.Timeouts{Start: time.Second}},
		{Name: "calc", URL: o.url, Format: client.FormatOTC},
	}, nil)
	assert.Less(t, time.Since(start), 2900*time.Millisecond, "three dead upstreams cost one start timeout (1 s), not three")
	_, err = reg.Lookup("calc.Echo_Say", otc.ProtocolOTC)
	require.NoError(t, err)
	_, err = reg.Lookup("late.Echo_Say", otc.ProtocolOTC)
	require.ErrorIs(t, err, otc.ErrToolNotFound)
	assert.NotEqual(t, federation.StateUp, healthOf(fed, "late").State)

	ln, err = net.Listen("tcp", addr)
	require.NoError(t, err)
	srv := &http.Server{Handler: otc.NewHandler(o.reg, nil)}
	go srv.Serve(ln)
	defer srv.Close()
	require.Eventually(t, func() bool {
		_, err := reg.Lookup("late.Echo_Say", otc.ProtocolOTC)
		return err == nil
	}, 10*time.Second, 50*time.Millisecond)
	assert.Equal(t, federation.StateUp, healthOf(fed, "late").State)
}

// TestFederation_CatalogChanges: a tool added upstream appears, a removed
// one answers as unknown, a changed one takes its new schema; a collision
// at mount time is an error naming both tools.
func TestFederation_CatalogChanges(t *testing.T) {
	o := newOrigin(t)
	fed, base, reg := gateway(t, []federation.Upstream{{Name: "calc", URL: o.url, Format: client.FormatOTC, Timeouts: federation.Timeouts{Refresh: time.Hour}}}, nil)
	cl, err := client.New(base+"/otc", nil)
	require.NoError(t, err)
	ctx := context.Background()

	require.NoError(t, otc.Register(o.reg, otc.Tool{ID: "Calculator.Neg", Version: "1.0.0", Description: "Negates a."},
		func(_ context.Context, in addIn) (int, error) { return -in.A, nil }))
	o.reg.Remove("Echo.Say")
	require.NoError(t, fed.Refresh(ctx, "calc"))

	res, err := cl.Call(ctx, "calc.Calculator_Neg", addIn{A: 4}, nil)
	require.NoError(t, err)
	assert.JSONEq(t, "-4", string(res.Value))
	_, err = cl.Call(ctx, "calc.Echo_Say", echoIn{Text: "x"}, nil)
	var oe *otc.Error
	require.True(t, errors.As(err, &oe), "%v", err)
	assert.Contains(t, oe.Error(), "calc.Echo_Say is not registered")

	// Changed: Neg now takes text.
	o.reg.Remove("Calculator.Neg")
	require.NoError(t, otc.Register(o.reg, otc.Tool{ID: "Calculator.Neg", Version: "1.0.0", Description: "Negates text."},
		func(_ context.Context, in echoIn) (string, error) { return "-" + in.Text, nil }))
	require.NoError(t, fed.Refresh(ctx, "calc"))
	res, err = cl.Call(ctx, "calc.Calculator_Neg", echoIn{Text: "x"}, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `"-x"`, string(res.Value))
	_, err = reg.Lookup("calc.Calculator_Neg@1.0.0", otc.ProtocolOTC)
	require.NoError(t, err)
}

func TestFederation_Collisions(t *testing.T) {
	o := newOrigin(t)
	mountErr := func(ups []federation.Upstream, setup func(*otc.Registry)) error {
		reg := otc.NewRegistry(nil)
		if setup != nil {
			setup(reg)
		}
		fed, err := federation.Mount(context.Background(), reg, ups, &federation.Options{Strict: true})
		if err == nil {
			fed.Close()
		}
		return err
	}
	// A local tool already has the name: a strict Mount fails on it.
	err := mountErr([]federation.Upstream{{Name: "calc", URL: o.url, Format: client.FormatOTC}}, func(reg *otc.Registry) {
		require.NoError(t, otc.Register(reg, otc.Tool{ID: "calc.Echo_Say", Version: "1.0.0", Description: "A local tool."},
			func(context.Context, otc.NoOutput) (string, error) { return "", nil }))
	})
	var ce *federation.CollisionError
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, "calc.Echo_Say", ce.Tool)
	assert.Contains(t, err.Error(), `its tool "Echo.Say"`)
	assert.Contains(t, err.Error(), "the registry's tool calc.Echo_Say")

	// A rename, or an exclusion, settles it.
	require.NoError(t, mountErr([]federation.Upstream{{Name: "calc", URL: o.url, Format: client.FormatOTC, Rename: map[string]string{"Echo.Say": "say"}}}, func(reg *otc.Registry) {
		require.NoError(t, otc.Register(reg, otc.Tool{ID: "calc.Echo_Say", Version: "1.0.0", Description: "A local tool."},
			func(context.Context, otc.NoOutput) (string, error) { return "", nil }))
	}))
	require.NoError(t, mountErr([]federation.Upstream{{Name: "calc", URL: o.url, Format: client.FormatOTC, Exclude: []string{"Echo.*"}}}, func(reg *otc.Registry) {
		require.NoError(t, otc.Register(reg, otc.Tool{ID: "calc.Echo_Say", Version: "1.0.0", Description: "A local tool."},
			func(context.Context, otc.NoOutput) (string, error) { return "", nil }))
	}))

	// Configuration errors name the upstream and the field.
	for _, c := range []struct {
		up   federation.Upstream
		want string
	}{
		{federation.Upstream{Name: "bad name", URL: o.url}, `federation: upstreams[0] (bad name) name:`},
		{federation.Upstream{Name: "x"}, "url: a url or a command is required"},
		{federation.Upstream{Name: "x", URL: o.url, Command: []string{"a"}}, "command: set a url or a command, not both"},
		{federation.Upstream{Name: "x", URL: o.url, Format: "grpc"}, `format: "grpc" is not one of`},
		{federation.Upstream{Name: "x", URL: o.url, Include: []string{"["}}, `the pattern "[" is malformed`},
		{federation.Upstream{Name: "x", URL: o.url, Rename: map[string]string{"a": "b.c"}}, `rename: "a" → "b.c"`},
		{federation.Upstream{Name: "x", URL: o.url, Credentials: federation.Credentials{PassThrough: true}}, "credentials.audience"},
		{federation.Upstream{Name: "x", URL: o.url, Credentials: federation.Credentials{APIKey: "k", BearerToken: "t"}}, "set one of"},
	} {
		err := mountErr([]federation.Upstream{c.up}, nil)
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.want)
	}
	err = mountErr([]federation.Upstream{{Name: "x", URL: o.url}, {Name: "x", URL: o.url}}, nil)
	assert.ErrorContains(t, err, `federation: upstreams[1] (x) name: the name is taken`)
}

func TestFederation_FiltersAndRenames(t *testing.T) {
	o := newOrigin(t)
	_, _, reg := gateway(t, []federation.Upstream{{Name: "calc", URL: o.url, Format: client.FormatOTC,
		Include: []string{"Calculator.*", "Echo.*"}, Exclude: []string{"Echo.*"}, Rename: map[string]string{"Calculator.Add": "add"}}}, nil)
	var ids []string
	for _, d := range reg.Tools() {
		ids = append(ids, d.ID)
	}
	assert.Equal(t, []string{"calc.add@1.0.0"}, ids)
	// A tool left out cannot be called by any name.
	for _, id := range []string{"calc.Echo_Say", "calc.Calculator_Add", "calc.Slow_Wait"} {
		_, err := reg.Lookup(id, otc.ProtocolOTC)
		assert.ErrorIs(t, err, otc.ErrToolNotFound, id)
	}
}

// TestFederation_Stdio: an MCP server run as a process, one per caller
// identity; a process that exits is started again.
func TestFederation_Stdio(t *testing.T) {
	up := stdioUpstream(t, "proc")
	fed, base, _ := gateway(t, []federation.Upstream{up}, func(reg *otc.Registry) {})
	_ = fed
	anon, err := client.New(base+"/otc", nil)
	require.NoError(t, err)
	ctx := context.Background()
	first, err := anon.CallText(ctx, "proc.Process_Count", nil)
	require.NoError(t, err)

	// The process exits in the middle of a call: the caller gets a
	// retryable error, and the process is started again.
	_, err = anon.Call(ctx, "proc.Process_Exit", exitIn{Code: 3}, nil)
	var te *otc.ToolError
	require.True(t, errors.As(err, &te), "%v", err)
	assert.True(t, te.CanRetry, "%v", te)
	var again string
	require.Eventually(t, func() bool {
		again, err = anon.CallText(ctx, "proc.Process_Count", nil)
		return err == nil
	}, 15*time.Second, 100*time.Millisecond)
	assert.NotEqual(t, pidOf(first), pidOf(again), "another process: %s then %s", first, again)
}

func pidOf(s string) string {
	pid, _, _ := strings.Cut(s, ":")
	if _, err := strconv.Atoi(pid); err != nil {
		return "?" + s
	}
	return pid
}

// TestFederation_MaxTools: an upstream that lists more tools than it may
// has its catalog refused, naming the bound; the last good one stays.
func TestFederation_MaxTools(t *testing.T) {
	o := newOrigin(t)
	_, err := federation.Mount(context.Background(), otc.NewRegistry(nil), []federation.Upstream{{Name: "calc", URL: o.url, Format: client.FormatOTC, MaxTools: 2}}, &federation.Options{Strict: true})
	require.ErrorContains(t, err, `upstream "calc" lists more than 2 tools`)

	fed, _, reg := gateway(t, []federation.Upstream{{Name: "calc", URL: o.url, Format: client.FormatOTC, MaxTools: 3, Timeouts: federation.Timeouts{Refresh: time.Hour}}}, nil)
	require.Len(t, reg.Tools(), 3)
	require.NoError(t, otc.Register(o.reg, otc.Tool{ID: "Extra.One", Version: "1.0.0", Description: "One too many."},
		func(context.Context, otc.NoOutput) (string, error) { return "", nil }))
	require.ErrorContains(t, fed.Refresh(context.Background(), "calc"), "more than 3 tools")
	assert.Len(t, reg.Tools(), 3, "the last good catalog stays")
	assert.Contains(t, healthOf(fed, "calc").LastError, "more than 3 tools")
}

// TestFederation_HostileFirstCatalog: an upstream whose first catalog
// cannot be served (more tools than its MaxTools, a name the registry
// has already) is left out as a dead one is: Mount serves the others,
// the health says why it is down, and its catalog comes once it can be
// served.
func TestFederation_HostileFirstCatalog(t *testing.T) {
	o := newOrigin(t)
	local := func(reg *otc.Registry) {
		require.NoError(t, otc.Register(reg, otc.Tool{ID: "clash.Echo_Say", Version: "1.0.0", Description: "A local tool."},
			func(context.Context, otc.NoOutput) (string, error) { return "local", nil }))
	}
	fed, base, reg := gateway(t, []federation.Upstream{
		{Name: "calc", URL: o.url, Format: client.FormatOTC},
		{Name: "big", URL: o.url, Format: client.FormatOTC, MaxTools: 2, Timeouts: federation.Timeouts{Refresh: time.Hour}},
		{Name: "clash", URL: o.url, Format: client.FormatOTC, Timeouts: federation.Timeouts{Refresh: time.Hour}},
	}, local)
	_, err := reg.Lookup("calc.Echo_Say", otc.ProtocolOTC)
	require.NoError(t, err, "the others are served")
	for _, c := range []struct{ name, why string }{{"big", "more than 2 tools"}, {"clash", "the registry's tool clash.Echo_Say"}} {
		h := healthOf(fed, c.name)
		assert.Equal(t, federation.StateDown, h.State, c.name)
		assert.Zero(t, h.Tools, c.name)
		assert.Contains(t, h.LastError, c.why, c.name)
	}
	_, err = reg.Lookup("big.Echo_Say", otc.ProtocolOTC)
	assert.ErrorIs(t, err, otc.ErrToolNotFound)
	cl, err := client.New(base+"/otc", nil)
	require.NoError(t, err)
	got, err := cl.CallText(context.Background(), "clash.Echo_Say", nil)
	require.NoError(t, err)
	assert.Equal(t, "local", got, "the local tool keeps its name")

	// Once the name is free, the catalog is served.
	reg.Remove("clash.Echo_Say")
	require.NoError(t, fed.Refresh(context.Background(), "clash"))
	assert.Equal(t, federation.StateUp, healthOf(fed, "clash").State)
	got, err = cl.CallText(context.Background(), "clash.Echo_Say", json.RawMessage(`{"text":"remote"}`))
	require.NoError(t, err)
	assert.Equal(t, "remote", got)
}

type beatsIn struct {
	Beats int  `json:"beats" jsonschema:"description=How many progress reports 100 ms apart."`
	Quiet bool `json:"quiet" jsonschema:"description=Report nothing while waiting."`
}

// TestFederation_IdleTimeout: a call to an MCP upstream that reports
// progress runs past the idle timeout as long as it does; one that goes
// quiet ends at the idle timeout, retryable, well before the call's
// overall timeout.
func TestFederation_IdleTimeout(t *testing.T) {
	o := newOrigin(t)
	require.NoError(t, otc.Register(o.reg, otc.Tool{ID: "Beat.Run", Version: "1.0.0", Description: "Waits, reporting progress or not."},
		func(ctx context.Context, in beatsIn) (int, error) {
			for i := range in.Beats {
				select {
				case <-ctx.Done():
					return 0, ctx.Err()
				case <-time.After(100 * time.Millisecond):
				}
				if !in.Quiet {
					otc.ReportProgress(ctx, float64(i+1), float64(in.Beats), "beat")
				}
			}
			return in.Beats, nil
		}))
	base := everyFormat(t, o)
	_, gw, _ := gateway(t, []federation.Upstream{{Name: "b", URL: base + "/mcp", Format: client.FormatMCP,
		Timeouts: federation.Timeouts{Idle: 400 * time.Millisecond, Call: 10 * time.Second}}}, nil)
	cl, err := client.New(gw+"/otc", nil)
	require.NoError(t, err)

	start := time.Now()
	res, err := cl.Call(context.Background(), "b.Beat_Run", beatsIn{Beats: 10}, nil)
	require.NoError(t, err)
	assert.JSONEq(t, "10", string(res.Value))
	assert.Greater(t, time.Since(start), 900*time.Millisecond, "ran past the idle timeout, reporting")

	start = time.Now()
	_, err = cl.Call(context.Background(), "b.Beat_Run", beatsIn{Beats: 30, Quiet: true}, nil)
	took := time.Since(start)
	var te *otc.ToolError
	require.ErrorAs(t, err, &te)
	assert.True(t, te.CanRetry)
	assert.Less(t, took, 8*time.Second, "ended by the idle timeout (400 ms), not the call's (10 s)")
}

// TestFederation_UpstreamBusy: an upstream that answers 503 with
// Retry-After gives the caller a retryable tool error that says as much,
// and one that answers 429 a retryable one too, neither opening the
// breaker at once.
func TestFederation_UpstreamBusy(t *testing.T) {
	o := newOrigin(t)
	var status atomic.Int64
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if code := int(status.Load()); code != 0 && r.Method == http.MethodPost {
			w.Header().Set("Retry-After", "7")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			_, _ = w.Write([]byte(`{"$schema":"otc://1.0","message":"Busy"}`))
			return
		}
		otc.NewHandler(o.reg, nil).ServeHTTP(w, r)
	}))
	defer front.Close()
	fed, base, _ := gateway(t, []federation.Upstream{{Name: "calc", URL: front.URL, Format: client.FormatOTC}}, nil)
	cl, err := client.New(base+"/otc", nil)
	require.NoError(t, err)
	for _, code := range []int{http.StatusServiceUnavailable, http.StatusTooManyRequests} {
		status.Store(int64(code))
		_, err = cl.Call(context.Background(), "calc.Echo_Say", echoIn{Text: "x"}, nil)
		var te *otc.ToolError
		require.ErrorAs(t, err, &te, "%d", code)
		assert.True(t, te.CanRetry, "%d", code)
		assert.Equal(t, 7*time.Second, te.RetryAfter, "%d: the upstream's Retry-After", code)
	}
	assert.NotEqual(t, federation.StateDown, healthOf(fed, "calc").State)
}

// TestFederation_CloseLeavesNothing: a federation of an OTC upstream, a
// dead one and an MCP server run as processes (the main one and a
// caller's), called and then closed, leaves no goroutine and no process
// behind, and its tools out of the registry. Not parallel, for goleak.
func TestFederation_CloseLeavesNothing(t *testing.T) {
	o := newOrigin(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	reg := otc.NewRegistry(nil)
	ctx := context.Background()
	up := stdioUpstream(t, "proc")
	up.SessionIdle = time.Hour
	fed, err := federation.Mount(ctx, reg, []federation.Upstream{
		{Name: "calc", URL: o.url, Format: client.FormatOTC},
		{Name: "dead", URL: "http://127.0.0.1:1", Format: client.FormatOTC, Timeouts: federation.Timeouts{Start: 100 * time.Millisecond}},
		up,
	}, nil)
	require.NoError(t, err)
	_, err = reg.Call(ctx, &otc.CallRequest{ToolID: "calc.Echo_Say", Input: json.RawMessage(`{"text":"hi"}`)})
	require.NoError(t, err)
	caller := otc.WithIdentity(ctx, &otc.Identity{Method: "api_key", Name: "ada"})
	_, err = reg.Call(caller, &otc.CallRequest{ToolID: "proc.Process_Count", Input: json.RawMessage(`{}`)})
	require.NoError(t, err)
	require.Equal(t, 1, healthOf(fed, "proc").Sessions, "the caller has a process of its own")

	require.NoError(t, fed.Close())
	assert.Empty(t, reg.Tools(), "Close takes the tools out")
	_, err = reg.Call(ctx, &otc.CallRequest{ToolID: "calc.Echo_Say", Input: json.RawMessage(`{"text":"hi"}`)})
	assert.ErrorIs(t, err, otc.ErrToolNotFound, "a closed federation's tool is unknown")
}

// TestFederation_HealthPublic: the health endpoint tells anyone each
// upstream's state, but its errors (whose text names internal addresses)
// only to a request the gateway's authenticator accepts.
func TestFederation_HealthPublic(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := "http://" + ln.Addr().String() + "/internal-path"
	ln.Close()
	o := newOrigin(t)
	fed, _, _ := gateway(t, []federation.Upstream{
		{Name: "calc", URL: o.url, Format: client.FormatOTC},
		{Name: "gone", URL: dead, Format: client.FormatOTC, Timeouts: federation.Timeouts{Start: 200 * time.Millisecond}},
	}, nil)
	require.Eventually(t, func() bool { return healthOf(fed, "gone").LastError != "" }, 10*time.Second, 10*time.Millisecond)
	keys, err := auth.NewAPIKeyAuth(map[string]string{"ops": "ops-key"})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/public", fed)
	mux.Handle("/health", fed.HealthHandler(keys))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	get := func(path, key string) string {
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		require.NoError(t, err)
		if key != "" {
			req.Header.Set("OXP-API-Key", key)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return string(b)
	}
	for _, c := range []struct{ path, key string }{{"/public", ""}, {"/public", "ops-key"}, {"/health", ""}, {"/health", "wrong"}} {
		body := get(c.path, c.key)
		assert.Contains(t, body, `"name":"gone"`, c)
		assert.Contains(t, body, `"state":"down"`, c)
		assert.NotContains(t, body, "last_error", c)
		assert.NotContains(t, body, ln.Addr().String(), c)
	}
	body := get("/health", "ops-key")
	assert.Contains(t, body, `"last_error"`)
	assert.Contains(t, body, ln.Addr().String(), "an operator sees why")
}

// TestFederation_A2AElsewhere: an A2A agent whose card sends its calls to
// another origin lists its skills but cannot be called: it is reported
// down as misconfigured, and a call is refused at once without a retry,
// saying its operator must mend it.
func TestFederation_A2AElsewhere(t *testing.T) {
	o := newOrigin(t)
	mux := http.NewServeMux()
	mount.All(mux, o.reg, &mount.Options{URL: "https://elsewhere.example"})
	agent := httptest.NewServer(mux)
	t.Cleanup(agent.Close)
	fed, base, _ := gateway(t, []federation.Upstream{{Name: "agent", URL: agent.URL + mount.PrefixA2A, Format: client.FormatA2A, Timeouts: federation.Timeouts{Refresh: time.Hour}}}, nil)
	h := healthOf(fed, "agent")
	assert.Equal(t, federation.StateDown, h.State)
	assert.Contains(t, h.LastError, "misconfigured")
	assert.Contains(t, h.LastError, "elsewhere.example")

	cl, err := client.New(base+"/otc", nil)
	require.NoError(t, err)
	_, err = cl.Call(context.Background(), "agent.Echo_Say", echoIn{Text: "x"}, nil)
	var te *otc.ToolError
	require.ErrorAs(t, err, &te)
	assert.False(t, te.CanRetry, "no retry mends it")
	assert.Contains(t, te.Message, "misconfigured")
}

// TestFederation_RetriesWhatCannotRunTwice: a call cut on its way to an
// MCP upstream (which does not deduplicate calls) is sent again by the
// upstream's client when its tool says it only reads, and handed back
// to the caller, retryable, when it does not; an OTC upstream, which
// deduplicates by call id, gets any such call again.
func TestFederation_RetriesWhatCannotRunTwice(t *testing.T) {
	o := newOrigin(t)
	yes := true
	var reads atomic.Int64
	require.NoError(t, otc.Register(o.reg, otc.Tool{ID: "Clock.Read", Version: "1.0.0", Description: "Reads the clock.", Annotations: &otc.ToolAnnotations{ReadOnlyHint: &yes}},
		func(context.Context, struct{}) (int64, error) { return reads.Add(1), nil }))
	var cut atomic.Int64 // tools/call requests still to cut
	front := func(next http.Handler) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if r.Method == http.MethodPost && (bytes.Contains(body, []byte(`"tools/call"`)) || strings.HasSuffix(r.URL.Path, "/tools/call")) && cut.Add(-1) >= 0 {
				hj, _ := w.(http.Hijacker)
				conn, _, _ := hj.Hijack()
				conn.Close()
				return
			}
			next.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	mcpFront, otcFront := front(mcp.NewHandler(o.reg, nil)), front(otc.NewHandler(o.reg, nil))
	_, base, _ := gateway(t, []federation.Upstream{
		{Name: "m", URL: mcpFront.URL, Format: client.FormatMCP},
		{Name: "o", URL: otcFront.URL, Format: client.FormatOTC},
	}, nil)
	cl, err := client.New(base+"/otc", nil)
	require.NoError(t, err)
	ctx := t.Context()

	cut.Store(1)
	res, err := cl.Call(ctx, "m.Clock_Read", nil, nil)
	require.NoError(t, err, "a read-only tool is called again")
	assert.JSONEq(t, `1`, string(res.Value), "and ran once")

	cut.Store(1)
	before := o.runs.Load()
	_, err = cl.Call(ctx, "m.Calculator_Add", addIn{A: 1, B: 2}, nil)
	var te *otc.ToolError
	require.ErrorAs(t, err, &te, "a tool that may not run twice is not called again")
	assert.True(t, te.CanRetry)
	assert.Equal(t, before, o.runs.Load())
	assert.Zero(t, cut.Load(), "one request was cut, none sent after it")

	cut.Store(1)
	before = o.runs.Load()
	sum, err := client.CallAs[int](ctx, cl, "o.Calculator_Add", addIn{A: 2, B: 3}, nil)
	require.NoError(t, err, "an OTC upstream deduplicates: the call goes again")
	assert.Equal(t, 5, sum)
	assert.Equal(t, before+1, o.runs.Load())
}

// TestFederation_WontHeal: an upstream that cannot be reached as it is
// set up (a command not found, a URL where nothing answers in its
// format) does not hold Mount for its start timeout: it is said at once,
// reported down with the reason, and tried again in the background; with
// Strict it fails Mount, naming it. Timings here are bounds far below the
// start timeout (a minute), not measurements.
func TestFederation_WontHeal(t *testing.T) {
	o := newOrigin(t)
	missing := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(missing.Close)
	ups := func() []federation.Upstream {
		return []federation.Upstream{
			{Name: "calc", URL: o.url, Format: client.FormatOTC},
			{Name: "nocmd", Command: []string{"/nonexistent/otc-test-server"}, Timeouts: federation.Timeouts{Start: time.Minute}},
			{Name: "nothing", URL: missing.URL, Format: client.FormatOTC, Timeouts: federation.Timeouts{Start: time.Minute}},
		}
	}
	start := time.Now()
	fed, _, reg := gateway(t, ups(), nil)
	assert.Less(t, time.Since(start), 30*time.Second, "Mount did not wait out a minute for what waiting cannot mend")
	_, err := reg.Lookup("calc.Echo_Say", otc.ProtocolOTC)
	require.NoError(t, err, "the upstream that answers is served")
	for name, want := range map[string]string{"nocmd": "/nonexistent/otc-test-server", "nothing": "404"} {
		h := healthOf(fed, name)
		assert.Equal(t, federation.StateDown, h.State, name)
		assert.Contains(t, h.LastError, want, name)
	}

	for i, up := range ups()[1:] {
		_, err := federation.Mount(t.Context(), otc.NewRegistry(nil), []federation.Upstream{up}, &federation.Options{Strict: true})
		require.Error(t, err, "%d: Strict fails the start", i)
		assert.Contains(t, err.Error(), "cannot be reached as it is set up")
		assert.Contains(t, err.Error(), up.Name)
	}
}

// TestFederation_SaysWhy: a call of a tool whose server was lost says
// what happened, in the words a caller reads (not "has not been reached
// yet"), and the failure in full in its developer message.
func TestFederation_SaysWhy(t *testing.T) {
	o := newOrigin(t)
	_, base, _ := gateway(t, []federation.Upstream{{Name: "lost", URL: o.url, Format: client.FormatOTC, Timeouts: federation.Timeouts{Refresh: time.Hour},
		Breaker: federation.Breaker{Failures: 1000}}}, nil)
	o.srv.CloseClientConnections()
	o.srv.Close()
	cl, err := client.New(base+"/otc", nil)
	require.NoError(t, err)
	var te *otc.ToolError
	require.Eventually(t, func() bool {
		_, err := cl.Call(t.Context(), "lost.Echo_Say", echoIn{Text: "x"}, nil)
		return errors.As(err, &te) && strings.Contains(te.Message, "cannot be reached just now")
	}, 10*time.Second, 20*time.Millisecond)
	assert.Contains(t, te.Message, "(it refused the connection)")
	assert.True(t, te.CanRetry)
	assert.Contains(t, te.DeveloperMessage, "connection refused")
}

// TestFederation_SuggestsWhereItAnswers: an MCP upstream pointed at an
// otc server's root (which answers MCP at /mcp) is told, once and at
// once, where it answers, in the configuration's terms.
func TestFederation_SuggestsWhereItAnswers(t *testing.T) {
	o := newOrigin(t)
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewHandler(o.reg, nil))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	fed, _, _ := gateway(t, []federation.Upstream{{Name: "m", URL: srv.URL, Format: client.FormatMCP, Timeouts: federation.Timeouts{Start: time.Minute}}}, nil)
	last := healthOf(fed, "m").LastError
	assert.Contains(t, last, "an MCP server answers at "+srv.URL+"/mcp: set the upstream's url to it (in otc gateway's file, mcp: {url: "+srv.URL+"/mcp})")
	assert.Equal(t, 1, strings.Count(last, "no MCP server answers at this URL"), "the hint once: %s", last)
	assert.NotContains(t, last, "OTC handler")
}

// deafServer is an MCP server over stdio that lists one tool,
// Deaf.Call, and answers its call by writing 100,000 pings and reading
// nothing more, so that the answers fill its input pipe; it ignores
// SIGTERM, and writes its pid to the file slowStartsEnv names.
func deafServer() {
	signal.Ignore(syscall.SIGTERM)
	if f := os.Getenv(slowStartsEnv); f != "" {
		_ = os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0o600)
	}
	in := bufio.NewScanner(os.Stdin)
	w := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil || len(m.ID) == 0 {
			continue
		}
		switch m.Method {
		case "initialize":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"deaf","version":"1"}}}`+"\n", m.ID)
		case "tools/list":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"Deaf_Call","description":"Never answers.","inputSchema":{"type":"object"}}]}}`+"\n", m.ID)
		case "tools/call":
			for i := range 100_000 {
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":"p%d","method":"ping"}`+"\n", i)
			}
			_ = w.Flush()
			time.Sleep(time.Hour)
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", m.ID)
		}
		_ = w.Flush()
	}
	os.Exit(0)
}

// TestFederation_DeafStdio: a stdio upstream that floods pings and reads
// nothing costs a call its timeout, holds up no other upstream, and
// does not hold up the gateway's shutdown, which ends its process.
func TestFederation_DeafStdio(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "deaf.pid")
	up := stdioUpstream(t, "deaf")
	up.Env = append(os.Environ(), stdioServerEnv+"=deaf", slowStartsEnv+"="+pidFile)
	up.Timeouts.Call = 2 * time.Second
	live := newOrigin(t)
	fed, base, _ := gateway(t, []federation.Upstream{up, {Name: "live", URL: live.url, Format: client.FormatOTC}}, nil)
	cl, err := client.New(base+"/otc", nil)
	require.NoError(t, err)
	ctx := context.Background()

	deaf := make(chan error, 1)
	go func() {
		_, err := cl.Call(ctx, "deaf.Deaf_Call", nil, nil)
		deaf <- err
	}()
	// While the deaf one holds its pipe, the other upstream answers.
	time.Sleep(300 * time.Millisecond)
	res, err := cl.Call(ctx, "live.Echo_Say", echoIn{Text: "here"}, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `"here"`, string(res.Value))
	select {
	case err := <-deaf:
		var te *otc.ToolError
		require.True(t, errors.As(err, &te), "%v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the deaf upstream's call outlived its 2 s timeout by 28 s")
	}

	b, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pid, err := strconv.Atoi(string(b))
	require.NoError(t, err)
	closed := make(chan struct{})
	go func() { fed.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(client.DefaultStdioGrace + 20*time.Second):
		t.Fatal("the gateway's shutdown is held up by the deaf upstream")
	}
	assert.Error(t, syscall.Kill(pid, 0), "the deaf upstream's process is left running")
}

// TestFederation_StdioEnv: a stdio upstream of a configuration file
// starts with a minimal environment and the file's env:, not with the
// gateway's secrets; with inherit_env: true, with the whole.
// Not parallel: it sets the environment.
func TestFederation_StdioEnv(t *testing.T) {
	t.Setenv("OTC_JWT_SECRET", "the-gateway-secret")
	t.Setenv(stdioServerEnv, "1")
	exe, err := os.Executable()
	require.NoError(t, err)
	config := filepath.Join(t.TempDir(), "gateway.yaml")
	require.NoError(t, os.WriteFile(config, []byte(fmt.Sprintf(`upstreams:
  - name: plain
    mcp: {command: [%q, "-test.run=^$"], env: {%s: "1", GIVEN: "by the file"}}
  - name: whole
    mcp: {command: [%q, "-test.run=^$"], inherit_env: true}
`, exe, stdioServerEnv, exe)), 0o600))
	cfg, err := federation.LoadConfig(config, os.Getenv)
	require.NoError(t, err)
	ups := cfg.Upstreams
	fed, base, _ := gateway(t, ups, nil)
	_ = fed
	cl, err := client.New(base+"/otc", nil)
	require.NoError(t, err)
	envOf := func(name string) []string {
		res, err := cl.Call(t.Context(), name+".Process_Env", nil, nil)
		require.NoError(t, err)
		var env []string
		require.NoError(t, json.Unmarshal(res.Value, &env))
		return env
	}
	plain := strings.Join(envOf("plain"), "\n")
	assert.NotContains(t, plain, "OTC_JWT_SECRET", "the gateway's secret reached the process")
	assert.Contains(t, plain, "GIVEN=by the file")
	assert.Contains(t, plain, "PATH="+os.Getenv("PATH"))
	whole := strings.Join(envOf("whole"), "\n")
	assert.Contains(t, whole, "OTC_JWT_SECRET=the-gateway-secret", "inherit_env: true")
}
