// Command calculator is an example tool server. It serves over OTC, under
// /otc as mount.All lays a server out (and at the root of its address, as
// it always has), the tools of the protocol's example exchanges,
// Calculator.Add and Doorbell.Ring; Math.Evaluate, which evaluates
// an arithmetic expression written as text, and takes the text of an A2A
// message (a client that only speaks text gets a task); Signer.Sign, which shows how a secret
// reaches a tool; Timer.Wait, a slow tool that shows cancellation and
// graceful shutdown; and Payments.Refund, a tool with a policy, which only
// a capability token bound to the exact call may call; and Memory.Store,
// which keeps a number that the resource calc://memory holds, so that an
// MCP client subscribed to it is told of each change. The same tools are
// served as a REST API under /v1/, and over MCP (Streamable HTTP) at /mcp;
// /registry/v1/tools lists them with their protocols and policies, as a
// tool registry would.
//
//	go run ./examples/calculator              # listens on 127.0.0.1:8080
//	go run ./examples/calculator -addr :9000
//	go run ./examples/calculator -stdio       # MCP on standard input and output
//	go run ./examples/calculator -addr 127.0.0.1:8090 -federate examples/gateway/gateway.yaml
//	                                          # and the tools of the servers it names
//
// Authentication is off unless the environment turns it on: OTC_API_KEY
// requires that key in the OXP-API-Key header; OTC_JWT_SECRET (at least 32
// bytes) requires an HS256 bearer token signed with it, whose audience,
// when it has one, must be in the comma-separated OTC_JWT_AUDIENCE.
// OTC_TOKEN_ISSUER, with the issuer's public keys in OTC_JWKS_FILE (a JWKS
// file) or at OTC_JWKS_URL, accepts the capability tokens that issuer
// signs, which Payments.Refund requires (go run ./examples/captoken makes
// keys and tokens to try it). OTC_OAUTH_ISSUER (an OAuth authorization
// server's issuer URL; its RFC 8414 or OpenID Connect metadata gives its
// keys) with OTC_OAUTH_RESOURCE (this server's resource identifier, the
// URL of its MCP endpoint, such as http://127.0.0.1:8080/mcp) makes the
// server an OAuth resource server: it accepts the access tokens that
// server issues for the resource, serves its Protected Resource Metadata
// at /.well-known/oauth-protected-resource and
// /.well-known/oauth-protected-resource/mcp, and Counter.Increment then
// needs the scope counter:write. With several set, any of those
// credentials is accepted. /health is always open.
// -print-token prints a token the server accepts, valid for 10 minutes,
// and exits:
//
//	TOKEN=$(OTC_JWT_SECRET=... OTC_JWT_AUDIENCE=calculator go run ./examples/calculator -print-token)
//
// On SIGTERM or SIGINT the server shuts down gracefully: /health answers
// 503 for -drain-delay (none by default), while calls are still served, so
// that a load balancer can notice and stop sending them; then the listener closes, calls already
// running get up to 15 seconds to finish, and the program exits 0. A
// second signal stops it at once.
//
// -log-level debug also logs the start of every Timer.Wait call.
// OTC_LOG_CALLS=1 logs every call: one JSON record per call on stderr,
// with its tool, call id, protocol, caller, outcome and duration.
//
// Timer.Wait has limits: a wait that runs past 2 seconds ends in a tool
// error that says it may be retried, and a fifth wait while four are
// running is refused at once, with a hint to retry after a second. Over
// MCP 2026-07-28, a client that declares the tasks extension gets the
// wait as a task, which it polls with tasks/get (otc call --task).
//
// call_id is an idempotency key: a call sent again with the same call_id
// (X-Request-Id on the REST API, _meta "io.github.otcgo/call_id" over MCP)
// gets the first call's result without the tool running again.
// Counter.Increment, which counts its calls, shows it. The record is kept
// in memory, or in Redis when OTC_REDIS_URL is set
// (redis://127.0.0.1:6379/0), or in a Redis Cluster when OTC_REDIS_CLUSTER
// names its nodes (host:port,…), so that several servers share it, and with
// it the MCP tasks, which any of them then reads, answers and cancels,
// the MCP sessions, whose subscribers are told of a change whichever
// replica made it (no sticky routing needed), and calc://memory's number;
// OTC_REDIS_LEASE (30s by default) is how long a claim, or a task's lease,
// outlives a replica that died mid-call. OTC_REQUEST_STATE_KEYS holds the
// keys that seal the requestState of an MCP input_required round (32
// random bytes each, hex or base64, comma-separated; the first seals, all
// open, for rotation): give every replica the same, so that any of them
// takes the next round. Without it each process makes a key of its own. OTC_RUN_LOG names a file that gets the call id of
// every run of Counter.Increment and Timer.Wait, one per line (a wait's
// when it starts), so that a test of several replicas can count the call
// ids that ran twice (examples/deploy).
//
// OTC_RATE_LIMIT limits every caller's calls ("20/s", "600/m", "3600/h",
// with an optional ",burst=N"): a caller is its identity (its API key or
// token), or, anonymous, its address (its /64 for IPv6);
// OTC_TRUSTED_PROXIES lists the load balancers (addresses or prefixes,
// comma-separated) whose X-Forwarded-For names that address. With
// OTC_REDIS_URL the limit is kept in Redis and holds across the replicas.
// A call over the limit is answered 429 with Retry-After over OTC and
// REST. With authentication on, a client address's failed
// authentications are bounded (20 at once, then 20 a minute; in Redis
// too): past the bound, its requests are answered 429 for a while. An
// anonymous caller's MCP and A2A tasks belong to its address, which holds
// at most 1,000 of them.
//
// OTC_PUBLIC_URL is the absolute URL clients reach the server at (such as
// https://tools.example.com): the Agent Card names its endpoints below it
// rather than below the Host each request gives. Set it behind a proxy.
//
// A2A clients may give a task a webhook (push notifications), which is
// posted each change of the task's state. Webhooks must be on public
// addresses; OTC_PUSH_ALLOWED_NETWORKS lists private networks allowed too
// (comma-separated prefixes, such as 10.0.0.0/8). With OTC_PUSH_KEY_FILE
// (a PEM PKCS #8 private key) each delivery carries a JWT signed with it,
// whose public key is at /a2a/.well-known/jwks.json.
package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/a2a"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/calllog"
	"github.com/otcgo/otc/federation"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/mount"
	"github.com/otcgo/otc/oauth"
	"github.com/otcgo/otc/ratelimit"
	"github.com/otcgo/otc/redisstore"
	"github.com/otcgo/otc/registryview"
	"github.com/otcgo/otc/rest"
	"github.com/otcgo/otc/search"
	"github.com/otcgo/otc/tasks"
)

// AddInput is the input of Calculator.Add.
type AddInput struct {
	A float64 `json:"a" jsonschema:"description=The first number to add."`
	B float64 `json:"b" jsonschema:"description=The second number to add."`
}

// RingInput is the input of Doorbell.Ring.
type RingInput struct {
	DoorbellID string `json:"doorbell_id" jsonschema:"description=The ID of the doorbell to ring."`
}

// SignInput is the input of Signer.Sign.
type SignInput struct {
	Message string `json:"message" jsonschema:"description=The text to sign."`
}

// SignOutput is the result of Signer.Sign.
type SignOutput struct {
	Signature string `json:"signature" jsonschema:"description=The hex HMAC-SHA256 of the message under the SIGNING_KEY secret."`
}

// RefundInput is the input of Payments.Refund.
type RefundInput struct {
	OrderID     string `json:"order_id" jsonschema:"description=The ID of the order to refund."`
	AmountCents int    `json:"amount_cents" jsonschema:"description=The amount to refund in cents: at least 1.,minimum=1"`
}

// RefundConfirmation is the answer Payments.Refund asks the user for.
type RefundConfirmation struct {
	Confirm bool `json:"confirm" jsonschema:"required,title=Refund,description=Yes to refund; no to leave the order as it is."`
}

// RefundOutput is the result of Payments.Refund.
type RefundOutput struct {
	RefundID string `json:"refund_id" jsonschema:"description=The ID of the new refund."`
}

// QuoteInput is the input of Shipping.Quote: a nested object, an optional
// enum and an optional bounded integer with defaults, and a pattern, the
// shapes that an agent framework's schema converter must keep.
type QuoteInput struct {
	To      ShipTo `json:"to" jsonschema:"description=Where the parcels go."`
	Speed   string `json:"speed,omitempty" jsonschema:"description=How fast: standard or express.,enum=standard,enum=express,default=standard"`
	Parcels int    `json:"parcels,omitempty" jsonschema:"description=How many parcels: 1 to 10.,minimum=1,maximum=10,default=1"`
}

// ShipTo is where Shipping.Quote's parcels go.
type ShipTo struct {
	Country  string `json:"country" jsonschema:"description=The country as its two-letter ISO code in capitals (FR or DE).,pattern=^[A-Z]{2}$"`
	Postcode string `json:"postcode,omitempty" jsonschema:"description=The postcode when known."`
}

// parcelCents is what one parcel costs, by speed.
var parcelCents = map[string]int{"standard": 500, "express": 1250}

// refundPolicy lets Payments.Refund be called over OTC and MCP (not the
// REST API) with a capability token for the payments resource that grants
// payments:refund within one tenant and is bound to this exact refund.
var refundPolicy = &otc.Policy{
	Protocols:            []string{otc.ProtocolOTC, otc.ProtocolMCP},
	ResourceURI:          "urn:otc:example:payments",
	RequiredCapabilities: []string{"payments:refund"},
	MaxBlastRadius:       "tenant:*",
	RequiresExecution:    true,
	AllowedOperations:    []string{"refund"},
}

// WaitInput is the input of Timer.Wait.
type WaitInput struct {
	Ms int `json:"ms" jsonschema:"description=How many milliseconds to wait: 0 to 10000.,minimum=0,maximum=10000"`
}

// doorbells are the doorbells Doorbell.Ring knows.
var doorbells = []string{"doorbell42", "doorbell84"}

// addIcon is Calculator.Add's icon, a plus sign drawn in SVG, as a data:
// URI so that a client needs to fetch nothing. MCP clients of 2025-11-25
// and later may show it; 2025-06-18 has no icons.
const addIcon = "data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9IjAgMCAyNCAyNCI+PHBhdGggZD0iTTExIDVoMnYxNGgtMnpNNSAxMWgxNHYySDV6Ii8+PC9zdmc+"

// Timer.Wait's limits: a call may run 2 seconds, and 4 may run at once.
const (
	waitTimeout       = 2 * time.Second
	waitMaxConcurrent = 4
)

// counterScope is the OAuth scope Counter.Increment needs when the server
// is an OAuth resource server (OTC_OAUTH_ISSUER and OTC_OAUTH_RESOURCE).
const counterScope = "counter:write"

// counter is Counter.Increment's count, shared by every call the process
// serves.
var counter atomic.Int64

// runLog, when OTC_RUN_LOG names a file, gets one line per run of
// Counter.Increment and Timer.Wait (as the wait starts): the call's id. Lines are appended with one write
// each, so that several replicas may share a file, and what was written
// survives the process being killed: the deployment's chaos test counts
// the call ids that ran more than once.
var runLog atomic.Pointer[os.File]

// recordRun appends the call's id to the run log, if there is one.
func recordRun(ctx context.Context) error {
	if f := runLog.Load(); f != nil {
		if _, err := f.WriteString(otc.CallID(ctx) + "\n"); err != nil {
			return fmt.Errorf("recording the run in OTC_RUN_LOG: %w", err)
		}
	}
	return nil
}

// newRegistry registers the example tools. callLog, when not nil, gets one
// record per call; store, when not nil, records calls by call id, so that
// a call retried with the same call_id is not run twice.
func newRegistry(logger, callLog *slog.Logger, store otc.IdempotencyStore, mem register, scoped bool, mw ...otc.Middleware) (*otc.Registry, error) {
	opts := &otc.RegistryOptions{Logger: logger, Idempotency: store}
	if callLog != nil {
		opts.Middleware = []otc.Middleware{calllog.New(callLog, nil)}
	}
	opts.Middleware = append(opts.Middleware, mw...)
	reg := otc.NewRegistry(opts)

	err := otc.Register(reg, otc.Tool{
		ID:                "Calculator.Add",
		Version:           "1.0.0",
		Description:       "Adds two numbers together.",
		OutputDescription: "The sum of the two numbers.",
		Title:             "Add two numbers",
		Annotations:       &otc.ToolAnnotations{ReadOnlyHint: new(true), IdempotentHint: new(true), OpenWorldHint: new(false)},
		Icons:             []otc.Icon{{Src: addIcon, MIMEType: "image/svg+xml", Sizes: []string{"any"}}},
	}, func(ctx context.Context, in AddInput) (float64, error) {
		return in.A + in.B, nil
	})
	if err != nil {
		return nil, err
	}

	err = otc.Register(reg, otc.Tool{
		ID:          "Doorbell.Ring",
		Version:     "0.1.0",
		Description: "Rings a doorbell given a doorbell ID.",
		Title:       "Ring a doorbell",
		// A ring adds a sound to the world and destroys nothing; a second
		// ring is a second sound, and the bell is outside the server.
		Annotations: &otc.ToolAnnotations{ReadOnlyHint: new(false), DestructiveHint: new(false), IdempotentHint: new(false), OpenWorldHint: new(true)},
	}, func(ctx context.Context, in RingInput) (otc.NoOutput, error) {
		if !slices.Contains(doorbells, in.DoorbellID) {
			return otc.NoOutput{}, &otc.ToolError{
				Message:                 "Doorbell ID not found",
				DeveloperMessage:        fmt.Sprintf("The doorbell with ID '%s' does not exist.", in.DoorbellID),
				CanRetry:                true,
				AdditionalPromptContent: "ids: doorbell42,doorbell84",
				RetryAfter:              500 * time.Millisecond,
			}
		}
		return otc.NoOutput{}, nil
	})
	if err != nil {
		return nil, err
	}

	err = otc.Register(reg, otc.Tool{
		ID:          "Signer.Sign",
		Version:     "1.0.0",
		Description: "Signs a message with the caller's SIGNING_KEY secret, so that a receiver holding the same key can check it.",
		Title:       "Sign a message",
		Annotations: &otc.ToolAnnotations{ReadOnlyHint: new(true), IdempotentHint: new(true), OpenWorldHint: new(false)},
		Requirements: &otc.Requirements{
			Secrets: []otc.SecretRequirement{{ID: "SIGNING_KEY"}},
		},
	}, func(ctx context.Context, in SignInput) (SignOutput, error) {
		// The registry has already refused calls without the secret, so
		// it is always here; the check guards against a changed
		// Requirements list.
		key, ok := otc.Secret(ctx, "SIGNING_KEY")
		if !ok {
			return SignOutput{}, errors.New("the SIGNING_KEY secret is missing")
		}
		mac := hmac.New(sha256.New, []byte(key))
		mac.Write([]byte(in.Message))
		return SignOutput{Signature: hex.EncodeToString(mac.Sum(nil))}, nil
	})
	if err != nil {
		return nil, err
	}

	err = otc.Register(reg, otc.Tool{
		ID:                "Timer.Wait",
		Version:           "1.0.0",
		Description:       "Waits the given number of milliseconds, then returns it. A wait longer than 2 seconds times out, and at most 4 waits run at once.",
		OutputDescription: "The number of milliseconds waited.",
		Title:             "Wait a while",
		Annotations:       &otc.ToolAnnotations{ReadOnlyHint: new(true), IdempotentHint: new(true), OpenWorldHint: new(false)},
		Timeout:           waitTimeout,
		MaxConcurrent:     waitMaxConcurrent,
		// An MCP 2026-07-28 client that declares the tasks extension gets
		// the wait as a task to poll; any other waits for the answer.
		Tasks: otc.TasksOptional,
	}, func(ctx context.Context, in WaitInput) (int, error) {
		logger.DebugContext(ctx, "calculator: Timer.Wait started", "call_id", otc.CallID(ctx), "ms", in.Ms)
		if err := recordRun(ctx); err != nil {
			return 0, err
		}
		// Over MCP, a client that sent a progressToken sees the wait
		// advance every quarter; elsewhere the reports go nowhere.
		total := float64(in.Ms)
		otc.ReportProgress(ctx, 0, total, "waiting")
		t := time.NewTimer(time.Duration(in.Ms) * time.Millisecond)
		defer t.Stop()
		tick := time.NewTicker(max(time.Duration(in.Ms)*time.Millisecond/4, time.Millisecond))
		defer tick.Stop()
		start := time.Now()
		for {
			select {
			case <-t.C:
				otc.ReportProgress(ctx, total, total, "done")
				return in.Ms, nil
			case <-tick.C:
				otc.ReportProgress(ctx, min(float64(time.Since(start).Milliseconds()), total), total, "")
			case <-ctx.Done():
				// The caller went away or the server gave up on the call:
				// stop waiting rather than hold the goroutine.
				return 0, fmt.Errorf("the wait of %d ms was cancelled: %w", in.Ms, ctx.Err())
			}
		}
	})
	if err != nil {
		return nil, err
	}

	err = otc.Register(reg, otc.Tool{
		ID:                "Shipping.Quote",
		Version:           "1.0.0",
		Description:       "Quotes the price of shipping parcels to a country. (An example: the prices are made up.)",
		OutputDescription: "The quote, as a sentence.",
		Title:             "Quote a shipment",
		Annotations:       &otc.ToolAnnotations{ReadOnlyHint: new(true), IdempotentHint: new(true), OpenWorldHint: new(false)},
	}, func(ctx context.Context, in QuoteInput) (string, error) {
		// The schema's defaults have filled in what the call left out.
		cents := parcelCents[in.Speed] * in.Parcels
		return fmt.Sprintf("%s to %s: %d parcel(s), %d.%02d EUR", in.Speed, in.To.Country, in.Parcels, cents/100, cents%100), nil
	})
	if err != nil {
		return nil, err
	}

	var counterPolicy *otc.Policy
	if scoped {
		counterPolicy = &otc.Policy{RequiredScopes: []string{counterScope}}
	}
	err = otc.Register(reg, otc.Tool{
		ID:                "Counter.Increment",
		Policy:            counterPolicy,
		Version:           "1.0.0",
		Description:       "Adds one to a counter and returns the new count. Calling it again with the same call_id returns the same count without counting again.",
		OutputDescription: "The count after this call's increment.",
		Title:             "Increment the counter",
		// Each call counts once more: not idempotent, though a retry with
		// the same call id is answered without counting again.
		Annotations: &otc.ToolAnnotations{ReadOnlyHint: new(false), DestructiveHint: new(false), IdempotentHint: new(false), OpenWorldHint: new(false)},
	}, func(ctx context.Context, _ struct{}) (int64, error) {
		if err := recordRun(ctx); err != nil {
			return 0, err
		}
		return counter.Add(1), nil
	})
	if err != nil {
		return nil, err
	}

	if err = otc.Register(reg, evaluateTool, evaluate); err != nil {
		return nil, err
	}

	err = otc.Register(reg, otc.Tool{
		ID:          "Payments.Refund",
		Version:     "1.0.0",
		Description: "Refunds part or all of an order and returns the refund's ID. It needs a capability token bound to this exact call. (An example: no money moves.)",
		Policy:      refundPolicy,
		Title:       "Refund an order",
		// Money leaves for good, each refund is a new one, and nothing
		// here reaches outside the example (no money moves).
		Annotations: &otc.ToolAnnotations{ReadOnlyHint: new(false), DestructiveHint: new(true), IdempotentHint: new(false), OpenWorldHint: new(false)},
	}, func(ctx context.Context, in RefundInput) (RefundOutput, error) {
		// The registry has checked the token before the call got here.
		// Money leaving is worth a question to the user, when the caller
		// can put one: over MCP 2026-07-28 the call answers input_required
		// and runs again with the answer; over OTC it ends with a tool
		// error naming the question, and the caller calls again with the
		// answer in context.input_responses. A caller that cannot answer
		// (ErrInputUnsupported) is not asked.
		var answer RefundConfirmation
		q := &otc.Elicitation{
			Key:     "confirm",
			Message: fmt.Sprintf("Refund %d.%02d of order %s?", in.AmountCents/100, in.AmountCents%100, in.OrderID),
			Answer:  &answer,
		}
		switch err := otc.AskAll(ctx, q); {
		case errors.Is(err, otc.ErrInputUnsupported):
		case err != nil:
			return RefundOutput{}, err
		case q.Action != otc.ElicitAccept || !answer.Confirm:
			return RefundOutput{}, &otc.ToolError{Message: "The refund was not confirmed, so nothing was refunded."}
		}
		// A real tool would now ask the payment provider. The ID is
		// derived from the call, so that each refund gets its own.
		sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%d", otc.CallID(ctx), in.OrderID, in.AmountCents))
		return RefundOutput{RefundID: "rf_" + hex.EncodeToString(sum[:6])}, nil
	})
	if err != nil {
		return nil, err
	}
	if err := registerReadables(reg); err != nil { // readables.go
		return nil, err
	}
	if err := registerMemory(reg, mem); err != nil { // memory.go
		return nil, err
	}
	return reg, nil
}

// Limits of the HTTP server. They bound what a slow or stalled client can
// hold, not how long a tool runs: the otc handlers clear the read deadline
// once a call's body is read and set the write deadline afresh before
// writing the answer, so a long-running tool is not cut off by them.
const (
	// readHeaderTimeout bounds the wait for a request's headers, a few
	// KiB that an honest client sends at once, so that connections opened
	// and left silent are closed soon.
	readHeaderTimeout = 10 * time.Second
	// readTimeout bounds reading a whole request, headers and body. A
	// call body is at most 4 MiB (the handlers' default limit): 30 s
	// carries that over a slow link and still frees a connection whose
	// client stalls halfway through.
	readTimeout = 30 * time.Second
	// writeTimeout bounds writing an answer, so that a client that stops
	// reading does not hold the connection. 60 s leaves a large catalog
	// time to reach a slow client.
	writeTimeout = 60 * time.Second
	// idleTimeout is how long a keep-alive connection may wait for its
	// next request. Agents call tools in bursts, between model turns of
	// many seconds; two minutes keeps the connection across those without
	// holding sockets for clients that have gone.
	idleTimeout = 120 * time.Second
	// maxHeaderBytes caps request headers. Calls carry their data in the
	// body; headers hold at most an API key or a bearer token (8 KiB at
	// most is read), so 64 KiB leaves room for what proxies add and is a
	// sixteenth of net/http's default of 1 MiB.
	maxHeaderBytes = 64 << 10
	// gracePeriod is how long calls still running when the listener
	// closes may take to finish: longer than the slowest tool, Timer.Wait,
	// whose timeout is 2 s, with room for tools added to the example.
	gracePeriod = 15 * time.Second
)

// tokenLifetime is how long a -print-token token is valid: long enough to
// paste into a few commands, and under the 15 minutes the server accepts.
const tokenLifetime = 10 * time.Minute

// serverVersion identifies the example in MCP's serverInfo.
const serverVersion = "1.0.0"

// config is what the flags set for run.
type config struct {
	addr       string
	drainDelay time.Duration
	stdio      bool
	// federate is a federation's configuration file: the upstreams whose
	// tools this server serves beside its own.
	federate string
}

func main() {
	var cfg config
	var level slog.Level
	flag.StringVar(&cfg.addr, "addr", "127.0.0.1:8080", "`host:port` to listen on")
	flag.DurationVar(&cfg.drainDelay, "drain-delay", 0, "on SIGTERM or SIGINT, how long /health answers 503 before the listener closes; behind a load balancer, its health-check interval times its failure threshold")
	flag.BoolVar(&cfg.stdio, "stdio", false, "serve the tools over MCP on standard input and output, for a client that starts the server as a process, instead of over HTTP")
	flag.StringVar(&cfg.federate, "federate", "", "a federation's configuration `file` (YAML, as otc gateway reads it): serve the tools of its upstreams beside this server's own, with their state at /federation/health")
	printToken := flag.Bool("print-token", false, "print an HS256 bearer token for OTC_JWT_SECRET and the first OTC_JWT_AUDIENCE, valid for 10 minutes, and exit")
	flag.TextVar(&level, "log-level", slog.LevelInfo, "the least `level` logged: debug, info, warn or error (debug logs each Timer.Wait call)")
	flag.Parse()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	if *printToken {
		if err := writeToken(os.Stdout, os.Getenv, time.Now()); err != nil {
			logger.Error("calculator: -print-token: " + err.Error())
			os.Exit(1)
		}
		return
	}

	ctx, stop := signalContext()
	defer stop()
	if err := run(ctx, cfg, logger); err != nil {
		logger.Error("calculator: " + err.Error())
		os.Exit(1)
	}
}

// signalContext returns a context that the first SIGINT or SIGTERM
// cancels. By the time it is cancelled, those signals have their default
// action back, so a second one stops the program at once instead of
// waiting for the shutdown to finish.
func signalContext() (context.Context, context.CancelFunc) {
	sig, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancel(context.Background())
	context.AfterFunc(sig, func() {
		stop()
		cancel()
	})
	return ctx, stop
}

// run serves until ctx is cancelled, then shuts down gracefully. It
// returns nil after a clean shutdown.
func run(ctx context.Context, cfg config, logger *slog.Logger) error {
	var callLog *slog.Logger
	if os.Getenv("OTC_LOG_CALLS") == "1" {
		callLog = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	sh, err := sharedFromEnv(ctx, os.Getenv)
	if err != nil {
		return err
	}
	store, storeName := sh.idem, sh.name
	if rs, ok := store.(*redisstore.IdempotencyStore); ok {
		// Outcomes Redis has not recorded yet are written in the
		// background; they get a few seconds once serving has stopped.
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), storeShutdown)
			defer cancel()
			if err := rs.Shutdown(ctx); err != nil {
				logger.Warn("calculator: some outcomes were not recorded in Redis before exit; their call ids are freed when their leases lapse", "error", err)
			}
		}()
	}
	if path := os.Getenv("OTC_RUN_LOG"); path != "" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("OTC_RUN_LOG: %w", err)
		}
		defer f.Close()
		runLog.Store(f)
		defer runLog.Store(nil)
	}
	var creds credentials
	var where site
	if !cfg.stdio {
		if creds, err = credentialsFromEnv(ctx, os.Getenv); err != nil {
			return err
		}
		if creds.auth != nil {
			// A client's failed authentications are bounded, across the
			// replicas when they share Redis: guesses cost a guesser its
			// access for a while, on every format.
			if creds.auth, err = ratelimit.Guard(creds.auth, &ratelimit.GuardOptions{Store: sh.rate, Logger: logger}); err != nil {
				return err
			}
		}
		if where, err = siteFromEnv(os.Getenv); err != nil {
			return err
		}
	}
	var mw []otc.Middleware
	limit, err := rateLimitFromEnv(os.Getenv, sh.rate)
	if err != nil {
		return err
	}
	if limit != nil {
		mw = append(mw, limit)
	}
	reg, err := newRegistry(logger, callLog, store, sh.memory, creds.oauth != nil, mw...)
	if err != nil {
		return err
	}
	var fed *federation.Federation
	if cfg.federate != "" {
		fc, err := federation.LoadConfig(cfg.federate, os.Getenv)
		if err != nil {
			return err
		}
		if fed, err = federation.Mount(ctx, reg, fc.Upstreams, &federation.Options{Logger: logger}); err != nil {
			return err
		}
		defer fed.Close()
	}
	if cfg.stdio {
		// The client is the process that started this one: there is
		// nothing to authenticate, and standard output is the protocol's.
		logger.Info("calculator: serving MCP on standard input and output")
		err := mcp.ServeStdio(ctx, reg, sh.mcpOptions(logger))
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	logger.Info("calculator: serving OTC tools",
		"url", "http://"+ln.Addr().String(), "rest", "/v1/", "mcp", "/mcp", "registry", "/registry/v1/tools", "auth", creds.methods, "idempotency", storeName)
	if sh.tasks != nil && sh.stateKeys == nil {
		logger.Warn("calculator: OTC_REDIS_URL (or OTC_REDIS_CLUSTER) is set but OTC_REQUEST_STATE_KEYS is not: the requestState of an input_required round opens only on the replica that issued it; give every replica the same keys")
	}
	handler, drain, err := newServer(reg, creds, sh, where, logger, fed)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
	}
	return mount.Serve(ctx, srv, ln, &mount.ServeOptions{
		// The REST handler has no readiness switch; its calls are still
		// taken during the drain delay, and /health is OTC's. MCP's
		// subscriptions/listen streams end, so that they do not hold the
		// shutdown until its grace period ends.
		Drain:       drain,
		DrainDelay:  cfg.drainDelay,
		GracePeriod: gracePeriod,
		Logger:      logger,
	})
}

// newServer serves the registry over OTC under /otc and at the root, as
// the REST API
// under /v1/, over MCP at /mcp and over A2A at /a2a (their tasks, and
// MCP's requestState keys, those sh shares), and as a registry listing
// under /registry/, all behind the same authentication (nil for none)
// and the site's trusted proxies. It also returns what shutdown drains:
// the OTC handler, whose health then fails, and the MCP handler, whose
// listen streams end.
func newServer(reg *otc.Registry, creds credentials, sh shared, where site, logger *slog.Logger, fed *federation.Federation) (http.Handler, []mount.Drainable, error) {
	auth := creds.auth
	mux := http.NewServeMux()
	if fed != nil {
		mux.Handle("/federation/health", fed.HealthHandler(auth))
	}
	mux.Handle("/registry/", http.StripPrefix("/registry", registryview.NewHandler(reg, &registryview.Options{Logger: logger, Authenticator: auth})))
	mux.Handle("/v1/", http.StripPrefix("/v1", rest.NewHandler(reg, &rest.Options{Logger: logger, Authenticator: auth, Search: search.Query})))
	mopts := sh.mcpOptions(logger)
	mopts.Authenticator = auth
	mh := mcp.NewHandler(reg, mopts)
	mux.Handle("/mcp", mh)
	mux.Handle("/mcp/{$}", mh) // as mount.All: clients write both
	push := where.push
	a2aHandler := a2a.NewHandler(reg, &a2a.Options{Logger: logger, Authenticator: auth, Name: "otc calculator", Tasks: &tasks.Options{Store: sh.tasks}, URL: where.a2aURL("/a2a"),
		TextTool: "Math_Evaluate", // a message of text: an expression to evaluate
		Push:     &push})          // webhooks told of each change of a task
	mux.Handle("/a2a", http.StripPrefix("/a2a", a2aHandler))
	mux.Handle("/a2a/", http.StripPrefix("/a2a", a2aHandler))
	mux.Handle("/.well-known/agent-card.json", a2aHandler.Card("/a2a"))
	if creds.oauth != nil {
		// The Protected Resource Metadata that MCP clients read to find
		// where to sign in: at the resource's well-known URL
		// (/.well-known/oauth-protected-resource/mcp) and at the root's.
		prm, err := creds.oauth.MetadataHandler(reg, &oauth.MetadataOptions{ResourceName: "calculator"})
		if err != nil {
			return nil, nil, fmt.Errorf("OTC_OAUTH_RESOURCE: %w", err)
		}
		prm.Mount(mux)
	}
	h := otc.NewHandler(reg, &otc.HandlerOptions{Logger: logger, Authenticator: auth, Search: search.Query})
	// OTC under /otc, where mount.All and otc gateway serve it (the
	// layout the docs show), and at the root, where the example has
	// always served it.
	mux.Handle("/otc/", http.StripPrefix("/otc", h))
	mux.Handle("/", h)
	return where.serve(mux), []mount.Drainable{h, mh}, nil
}

// writeToken writes a bearer token the server accepts when started with
// the same environment: HS256 under OTC_JWT_SECRET, with the first
// audience of OTC_JWT_AUDIENCE (none if it is empty), subject
// "example-user", issued at now and valid for tokenLifetime.
func writeToken(w io.Writer, getenv func(string) string, now time.Time) error {
	secret := getenv("OTC_JWT_SECRET")
	switch {
	case secret == "":
		return errors.New("OTC_JWT_SECRET is not set; set it to the secret the server runs with (at least 32 bytes)")
	case len(secret) < 32:
		return fmt.Errorf("OTC_JWT_SECRET is %d bytes long; the server refuses secrets shorter than 32 bytes, so use a longer one for both", len(secret))
	}
	claims := jwt.RegisteredClaims{
		Subject:   "example-user",
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(tokenLifetime)),
	}
	if aud := audiencesFromEnv(getenv); len(aud) > 0 {
		claims.Audience = jwt.ClaimStrings{aud[0]}
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(secret))
	if err != nil {
		return fmt.Errorf("signing the token: %w", err)
	}
	_, err = fmt.Fprintln(w, tok)
	return err
}

// audiencesFromEnv reads the comma-separated OTC_JWT_AUDIENCE, skipping
// blanks.
func audiencesFromEnv(getenv func(string) string) []string {
	var audiences []string
	for _, a := range strings.Split(getenv("OTC_JWT_AUDIENCE"), ",") {
		if a = strings.TrimSpace(a); a != "" {
			audiences = append(audiences, a)
		}
	}
	return audiences
}

// credentialsFromEnv turns authentication on when the environment says
// so: OTC_API_KEY accepts that key in the OXP-API-Key header;
// OTC_JWT_SECRET accepts HS256 bearer tokens signed with it, whose "aud",
// when present, must be one of the comma-separated OTC_JWT_AUDIENCE;
// OTC_TOKEN_ISSUER accepts the capability tokens that issuer signs with
// the keys of OTC_JWKS_FILE or OTC_JWKS_URL; and OTC_OAUTH_ISSUER with
// OTC_OAUTH_RESOURCE accepts that authorization server's OAuth access
// tokens for this server. With several, any passes. ctx bounds the
// fetches of key sets and metadata.
func credentialsFromEnv(ctx context.Context, getenv func(string) string) (credentials, error) {
	var auths []otc.Authenticator
	var names []string
	if key := getenv("OTC_API_KEY"); key != "" {
		a, err := auth.NewAPIKeyAuth(map[string]string{"OTC_API_KEY": key})
		if err != nil {
			return credentials{}, err
		}
		auths, names = append(auths, a), append(names, "api_key")
	}
	if secret := getenv("OTC_JWT_SECRET"); secret != "" {
		a, err := auth.NewJWTAuth(&auth.JWTOptions{Secret: []byte(secret), Audiences: audiencesFromEnv(getenv)})
		if err != nil {
			return credentials{}, fmt.Errorf("OTC_JWT_SECRET: %w", err)
		}
		auths, names = append(auths, a), append(names, "jwt")
	}
	capability, err := capabilityFromEnv(ctx, getenv)
	if err != nil {
		return credentials{}, err
	}
	if capability != nil {
		auths, names = append(auths, capability), append(names, "capability")
	}
	resource, err := oauthFromEnv(ctx, getenv)
	if err != nil {
		return credentials{}, err
	}
	if resource != nil {
		auths, names = append(auths, resource), append(names, "oauth")
	}
	c := credentials{oauth: resource}
	switch len(auths) {
	case 0:
		c.methods = "none"
	case 1:
		c.auth, c.methods = auths[0], names[0]
	default:
		c.auth, c.methods = auth.AnyOf(auths...), strings.Join(names, "+")
	}
	return c, nil
}

// oauthFromEnv builds the OAuth resource server that OTC_OAUTH_ISSUER and
// OTC_OAUTH_RESOURCE ask for, or returns nil when neither is set. The
// authorization server's keys come from its metadata (RFC 8414, or OpenID
// Connect discovery), fetched in the background.
func oauthFromEnv(ctx context.Context, getenv func(string) string) (*oauth.Authenticator, error) {
	issuer := strings.TrimSpace(getenv("OTC_OAUTH_ISSUER"))
	resource := strings.TrimSpace(getenv("OTC_OAUTH_RESOURCE"))
	switch {
	case issuer == "" && resource == "":
		return nil, nil
	case issuer == "":
		return nil, errors.New("OTC_OAUTH_RESOURCE is set but OTC_OAUTH_ISSUER is not: set it to the issuer URL of the authorization server whose access tokens to accept")
	case resource == "":
		return nil, errors.New("OTC_OAUTH_ISSUER is set but OTC_OAUTH_RESOURCE is not: set it to this server's resource identifier, the URL of its MCP endpoint (http://127.0.0.1:8080/mcp)")
	}
	a, err := oauth.New(ctx, &oauth.Options{
		Resource:             resource,
		AuthorizationServers: []oauth.AuthorizationServer{{Issuer: issuer}},
	})
	if err != nil {
		return nil, fmt.Errorf("OTC_OAUTH_ISSUER and OTC_OAUTH_RESOURCE: %w", err)
	}
	return a, nil
}

// credentials is how the server authenticates, as the environment says.
type credentials struct {
	auth    otc.Authenticator    // nil: nobody is authenticated
	methods string               // for the startup log: "none", "api_key+oauth", …
	oauth   *oauth.Authenticator // nil unless OTC_OAUTH_ISSUER and OTC_OAUTH_RESOURCE are set
}

// capabilityFromEnv builds the capability-token authenticator that
// OTC_TOKEN_ISSUER with OTC_JWKS_FILE or OTC_JWKS_URL asks for, or returns
// nil when none of them is set. One without the other is an error: a
// server started with half a configuration would refuse every token, and
// say so only when a call came.
func capabilityFromEnv(ctx context.Context, getenv func(string) string) (*auth.CapabilityAuth, error) {
	issuer := strings.TrimSpace(getenv("OTC_TOKEN_ISSUER"))
	file, url := getenv("OTC_JWKS_FILE"), getenv("OTC_JWKS_URL")
	switch {
	case issuer == "" && file == "" && url == "":
		return nil, nil
	case issuer == "":
		set := "OTC_JWKS_FILE"
		if file == "" {
			set = "OTC_JWKS_URL"
		}
		return nil, fmt.Errorf("%s is set but OTC_TOKEN_ISSUER is not: set it to the issuer whose tokens to accept (their iss claim)", set)
	case file == "" && url == "":
		return nil, errors.New("OTC_TOKEN_ISSUER is set but neither OTC_JWKS_FILE nor OTC_JWKS_URL is: set one to the issuer's public keys (a JWKS file, or the URL it publishes them at)")
	case file != "" && url != "":
		return nil, errors.New("OTC_JWKS_FILE and OTC_JWKS_URL are both set: set only one, the file or the URL of the issuer's public keys")
	}
	opts := auth.CapabilityOptions{Issuers: []string{issuer}, JWKSURL: url}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("OTC_JWKS_FILE: %w", err)
		}
		opts.JWKS = b
	}
	a, err := auth.NewCapabilityAuth(ctx, &opts)
	if err != nil {
		return nil, fmt.Errorf("OTC_TOKEN_ISSUER: %w", err)
	}
	return a, nil
}
