// Command calculator is an example tool server. It serves, at the root of
// its address, the tools of the protocol's example exchanges,
// Calculator.Add and Doorbell.Ring, and a third tool, Signer.Sign, that
// shows how a secret reaches a tool. The same tools are served as a REST
// API under /v1/.
//
//	go run ./examples/calculator              # listens on 127.0.0.1:8080
//	go run ./examples/calculator -addr :9000
//
// Authentication is off unless the environment turns it on: OTC_API_KEY
// requires that key in the OXP-API-Key header; OTC_JWT_SECRET (at least 32
// bytes) requires an HS256 bearer token signed with it, whose audience,
// when it has one, must be in the comma-separated OTC_JWT_AUDIENCE. With
// both set, either credential is accepted. /health is always open.
package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/otcgo/otc"
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

// doorbells are the doorbells Doorbell.Ring knows.
var doorbells = []string{"doorbell42", "doorbell84"}

// newRegistry registers the example tools.
func newRegistry(logger *slog.Logger) (*otc.Registry, error) {
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: logger})

	err := otc.Register(reg, otc.Tool{
		ID:                "Calculator.Add",
		Version:           "1.0.0",
		Description:       "Adds two numbers together.",
		OutputDescription: "The sum of the two numbers.",
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
	return reg, nil
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "`host:port` to listen on")
	flag.Parse()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(*addr, logger); err != nil {
		logger.Error("calculator: " + err.Error())
		os.Exit(1)
	}
}

func run(addr string, logger *slog.Logger) error {
	reg, err := newRegistry(logger)
	if err != nil {
		return err
	}
	auth, methods, err := authenticatorFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	logger.Info("calculator: serving OTC tools",
		"url", "http://"+ln.Addr().String(), "rest", "/v1/", "auth", methods)
	srv := &http.Server{
		Handler:           newServer(reg, auth, logger),
		ReadHeaderTimeout: 10 * time.Second,
	}
	return srv.Serve(ln)
}

// newServer serves the registry over OTC at the root and as the REST API
// under /v1/, both behind the same authentication (nil for none).
func newServer(reg *otc.Registry, auth otc.Authenticator, logger *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/v1/", http.StripPrefix("/v1", otc.NewRESTHandler(reg, &otc.RESTOptions{Logger: logger, Authenticator: auth})))
	mux.Handle("/", otc.NewHandler(reg, &otc.HandlerOptions{Logger: logger, Authenticator: auth}))
	return mux
}

// authenticatorFromEnv turns authentication on when the environment says
// so: OTC_API_KEY accepts that key in the OXP-API-Key header, and
// OTC_JWT_SECRET accepts HS256 bearer tokens signed with it, whose "aud",
// when present, must be one of the comma-separated OTC_JWT_AUDIENCE. With
// both, either passes. methods names what is on, for the log.
func authenticatorFromEnv(getenv func(string) string) (auth otc.Authenticator, methods string, err error) {
	var auths []otc.Authenticator
	var names []string
	if key := getenv("OTC_API_KEY"); key != "" {
		a, err := otc.NewAPIKeyAuth(map[string]string{"OTC_API_KEY": key})
		if err != nil {
			return nil, "", err
		}
		auths, names = append(auths, a), append(names, "api_key")
	}
	if secret := getenv("OTC_JWT_SECRET"); secret != "" {
		var audiences []string
		for _, a := range strings.Split(getenv("OTC_JWT_AUDIENCE"), ",") {
			if a = strings.TrimSpace(a); a != "" {
				audiences = append(audiences, a)
			}
		}
		a, err := otc.NewJWTAuth(otc.JWTOptions{Secret: []byte(secret), Audiences: audiences})
		if err != nil {
			return nil, "", fmt.Errorf("OTC_JWT_SECRET: %w", err)
		}
		auths, names = append(auths, a), append(names, "jwt")
	}
	switch len(auths) {
	case 0:
		return nil, "none", nil
	case 1:
		return auths[0], names[0], nil
	}
	return otc.AnyOf(auths...), strings.Join(names, "+"), nil
}
