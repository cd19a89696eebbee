package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/a2a"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/federation"
	"github.com/otcgo/otc/idempotency"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/mount"
	"github.com/otcgo/otc/prompt"
	"github.com/otcgo/otc/ratelimit"
	"github.com/otcgo/otc/resource"
	"github.com/otcgo/otc/skill"
)

// defaultGatewayAddr is where otc gateway listens without --addr.
const defaultGatewayAddr = "127.0.0.1:8088"

// gatewayHealthPath is where the gateway reports its upstreams.
const gatewayHealthPath = "/federation/health"

// gatewayFromEnv builds the gateway's own authenticator and rate limit
// from the environment variables the example server reads: OTC_API_KEY,
// OTC_JWT_SECRET (with OTC_JWT_AUDIENCE) and OTC_RATE_LIMIT.
func gatewayFromEnv(getenv func(string) string) (otc.Authenticator, otc.Middleware, error) {
	if getenv("OTC_REDIS_URL") != "" || getenv("OTC_REDIS_CLUSTER") != "" {
		return nil, nil, errors.New("OTC_REDIS_URL: otc gateway keeps its records and MCP sessions in this process (the command does not link the Redis module); run its replicas behind a load balancer that keeps each caller on one, or, for replicas sharing Redis, the example server with -federate FILE (docs/federation.md), or unset it")
	}
	var auths []otc.Authenticator
	if key := getenv("OTC_API_KEY"); key != "" {
		a, err := auth.NewAPIKeyAuth(map[string]string{"OTC_API_KEY": key})
		if err != nil {
			return nil, nil, err
		}
		auths = append(auths, a)
	}
	if secret := getenv("OTC_JWT_SECRET"); secret != "" {
		var aud []string
		for _, a := range strings.Split(getenv("OTC_JWT_AUDIENCE"), ",") {
			if a = strings.TrimSpace(a); a != "" {
				aud = append(aud, a)
			}
		}
		a, err := auth.NewJWTAuth(&auth.JWTOptions{Secret: []byte(secret), Audiences: aud})
		if err != nil {
			return nil, nil, fmt.Errorf("OTC_JWT_SECRET: %w", err)
		}
		auths = append(auths, a)
	}
	var authn otc.Authenticator
	switch len(auths) {
	case 0:
	case 1:
		authn = auths[0]
	default:
		authn = auth.AnyOf(auths...)
	}
	spec := strings.TrimSpace(getenv("OTC_RATE_LIMIT"))
	if spec == "" {
		return authn, nil, nil
	}
	l, err := ratelimit.ParseLimit(spec)
	if err != nil {
		return nil, nil, fmt.Errorf("OTC_RATE_LIMIT: %w", err)
	}
	mw, err := ratelimit.New(&ratelimit.Options{All: l})
	if err != nil {
		return nil, nil, fmt.Errorf("OTC_RATE_LIMIT: %w", err)
	}
	return authn, mw, nil
}

// gateway is "otc gateway --config FILE [--addr HOST:PORT] [--strict]".
// It listens at once and serves what is up while its upstreams are
// reached, each for its start timeout at most; one that cannot be reached
// as it is set up is said at once (and fails the start with --strict).
func (e *cli) gateway(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("otc gateway", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	config := fs.String("config", "", "the configuration file (YAML or JSON)")
	addr := fs.String("addr", defaultGatewayAddr, "the address to listen on")
	strict := fs.Bool("strict", false, "fail the start on an upstream that cannot be reached or served as it is set up")
	stdio := fs.Bool("stdio", false, "serve MCP on standard input and output, as a host that starts servers as commands wants, not HTTP")
	if err := fs.Parse(args); err != nil {
		return exitBadInput
	}
	if *config == "" || fs.NArg() > 0 {
		fmt.Fprintln(e.stderr, "usage: otc gateway --config FILE [--addr HOST:PORT | --stdio] [--strict]")
		return exitBadInput
	}
	cfg, err := federation.LoadConfig(*config, e.getenv)
	if err != nil {
		fmt.Fprintln(e.stderr, "otc gateway:", err)
		return exitBadInput
	}
	authn, limit, err := gatewayFromEnv(e.getenv)
	if err != nil {
		fmt.Fprintln(e.stderr, "otc gateway:", err)
		return exitBadInput
	}
	logger := slog.New(slog.NewTextHandler(e.stderr, nil))
	ro := &otc.RegistryOptions{Logger: logger, Idempotency: idempotency.NewMemoryStore(nil)}
	if limit != nil {
		ro.Middleware = []otc.Middleware{limit}
	}
	reg := otc.NewRegistry(ro)
	if cfg.ReadablesAsTools {
		// For the agents whose format has tools only: every upstream's
		// resources, prompts and skills, as tools, under each one's policy.
		if err := errors.Join(resource.RegisterTools(reg, nil), prompt.RegisterTools(reg, nil), skill.RegisterTools(reg, nil)); err != nil {
			fmt.Fprintln(e.stderr, "otc gateway:", err)
			return exitBadInput
		}
	}
	mcpOpts := &mcp.Options{Name: cfg.Name, Version: cfg.Version}
	if s := cfg.MCPSearch; s != nil {
		// A caller who may see more tools than the threshold lists a
		// few, a search tool and a call tool.
		mcpOpts.Search = s
	}
	if *stdio {
		return e.gatewayStdio(ctx, reg, cfg, mcpOpts, logger, *strict)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(e.stderr, "otc gateway:", err)
		return exitTransport
	}
	// Served from now: each upstream's tools appear as it is reached,
	// and the health page says "starting" until the federation is up.
	var health atomic.Pointer[http.Handler]
	mux := http.NewServeMux()
	// A2A's card lists every skill; the search skill finds among them.
	mo := &mount.Options{Authenticator: authn, Logger: logger, A2A: &a2a.Options{Search: true, Name: cfg.Name}, MCP: mcpOpts}
	hs := mount.All(mux, reg, mo)
	mux.Handle(gatewayHealthPath, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := health.Load(); h != nil {
			(*h).ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"state":"starting","upstreams":[]}`))
	}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	served := make(chan error, 1)
	// Draining ends MCP's listen streams, which would hold the shutdown.
	drain := []mount.Drainable{hs.OTC, hs.MCP}
	go func() {
		served <- mount.Serve(sctx, srv, ln, &mount.ServeOptions{GracePeriod: 5 * time.Second, Drain: drain})
	}()
	fed, err := federation.Mount(ctx, reg, cfg.Upstreams, &federation.Options{Logger: logger, Strict: *strict})
	if err != nil {
		stop()
		<-served
		fmt.Fprintln(e.stderr, "otc gateway:", err)
		return exitBadInput
	}
	defer fed.Close()
	hh := fed.HealthHandler(authn)
	health.Store(&hh)
	for _, h := range fed.Health() {
		fmt.Fprintln(e.stdout, upstreamLine(h))
	}
	fmt.Fprintf(e.stdout, "otc gateway: serving %d upstreams on http://%s (OTC /otc, MCP /mcp, REST /v1, A2A /a2a, health %s)\n", len(cfg.Upstreams), ln.Addr(), gatewayHealthPath)
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(e.stderr, "otc gateway:", err)
		return exitTransport
	}
	return exitOK
}

// upstreamLine says what the gateway serves of an upstream.
func upstreamLine(h federation.Health) string {
	line := fmt.Sprintf("upstream %s: %s, %d tools", h.Name, h.State, h.Tools)
	for _, n := range []struct {
		n    int
		what string
	}{{h.Resources, "resources"}, {h.Templates, "templates"}, {h.Prompts, "prompts"}, {h.Skills, "skills"}} {
		if n.n > 0 {
			line += fmt.Sprintf(", %d %s", n.n, n.what)
		}
	}
	return line
}

// gatewayStdio serves the gateway's MCP on standard input and output:
// what it serves over HTTP, to a host that starts it as a command. What
// it says of its upstreams goes to standard error, standard output being
// the protocol's.
func (e *cli) gatewayStdio(ctx context.Context, reg *otc.Registry, cfg *federation.Config, opts *mcp.Options, logger *slog.Logger, strict bool) int {
	fed, err := federation.Mount(ctx, reg, cfg.Upstreams, &federation.Options{Logger: logger, Strict: strict})
	if err != nil {
		fmt.Fprintln(e.stderr, "otc gateway:", err)
		return exitBadInput
	}
	defer fed.Close()
	for _, h := range fed.Health() {
		fmt.Fprintln(e.stderr, upstreamLine(h))
	}
	fmt.Fprintf(e.stderr, "otc gateway: serving %d upstreams over MCP on standard input and output\n", len(cfg.Upstreams))
	opts.Logger = logger
	if err := mcp.Serve(ctx, reg, e.stdin, e.stdout, opts); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(e.stderr, "otc gateway:", err)
		return exitTransport
	}
	return exitOK
}
