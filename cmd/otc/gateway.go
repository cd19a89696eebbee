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
	"github.com/otcgo/otc/ratelimit"
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
	if err := fs.Parse(args); err != nil {
		return exitBadInput
	}
	if *config == "" || fs.NArg() > 0 {
		fmt.Fprintln(e.stderr, "usage: otc gateway --config FILE [--addr HOST:PORT] [--strict]")
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
	mo := &mount.Options{Authenticator: authn, Logger: logger, A2A: &a2a.Options{Search: true}}
	if s := cfg.MCPSearch; s != nil {
		// A caller who may see more tools than the threshold lists a
		// few, a search tool and a call tool.
		mo.MCP = &mcp.Options{Search: s}
	}
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
		fmt.Fprintf(e.stdout, "upstream %s: %s, %d tools\n", h.Name, h.State, h.Tools)
	}
	fmt.Fprintf(e.stdout, "otc gateway: serving %d upstreams on http://%s (OTC /otc, MCP /mcp, REST /v1, A2A /a2a, health %s)\n", len(cfg.Upstreams), ln.Addr(), gatewayHealthPath)
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(e.stderr, "otc gateway:", err)
		return exitTransport
	}
	return exitOK
}
