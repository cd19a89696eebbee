// Command client talks to the calculator example server: it lists the
// tools, calls Calculator.Add, shows a validation error and the retry hint
// of Doorbell.Ring, and exits non-zero if any step does not behave as
// expected.
//
//	go build -o /tmp/calculator ./examples/calculator && /tmp/calculator &
//	go run ./examples/client -url http://127.0.0.1:8080
//	kill %1
//
// When the server requires credentials, pass its API key with -api-key,
// or its JWT secret with -jwt-secret (and an audience it accepts with
// -jwt-audience): the client then signs a short-lived token for every
// request.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/export"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8080", "base `URL` of the tool server")
	apiKey := flag.String("api-key", "", "send this `key` in the OXP-API-Key header (the server's OTC_API_KEY)")
	jwtSecret := flag.String("jwt-secret", "", "sign an HS256 bearer token for each request with this `secret` (the server's OTC_JWT_SECRET)")
	jwtAudience := flag.String("jwt-audience", "", "the `audience` of those tokens: one of the server's OTC_JWT_AUDIENCE")
	flag.Parse()
	opts, err := clientOptions(*apiKey, *jwtSecret, *jwtAudience)
	if err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := run(ctx, *url, opts, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		os.Exit(1)
	}
}

// clientOptions turns the credential flags into client options, and
// refuses combinations that cannot work before anything is sent.
func clientOptions(apiKey, jwtSecret, jwtAudience string) (*client.Options, error) {
	opts := &client.Options{APIKey: apiKey}
	switch {
	case jwtSecret == "" && jwtAudience != "":
		return nil, errors.New("-jwt-audience needs -jwt-secret: the audience goes into tokens signed with that secret")
	case jwtSecret == "":
	case len(jwtSecret) < 32:
		// The server refuses shorter secrets, so this cannot be its secret.
		return nil, fmt.Errorf("-jwt-secret is %d bytes long; the server's secret is at least 32 bytes", len(jwtSecret))
	default:
		opts.JWT = &client.JWTSigner{Secret: []byte(jwtSecret), Audience: jwtAudience, Subject: "example-client"}
	}
	return opts, nil
}

// AddInput is the input of Calculator.Add.
type AddInput struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

// run runs the steps against the server at url. opts may be nil.
func run(ctx context.Context, url string, opts *client.Options, out io.Writer) error {
	c, err := client.New(url, opts)
	if err != nil {
		return err
	}

	// 1. List the tools, and declare them as a model would see them.
	defs, err := c.ListTools(ctx)
	if err != nil {
		return fmt.Errorf("listing tools: %w%s", err, credentialsHint(err, opts))
	}
	if len(defs) == 0 {
		return errors.New("the server lists no tools")
	}
	tools, err := export.New(defs, nil)
	if err != nil {
		return fmt.Errorf("the catalog: %w", err)
	}
	fmt.Fprintf(out, "%d tools:\n", len(defs))
	for _, d := range defs {
		fmt.Fprintf(out, "  %s  %s\n", d.ID, d.Description)
	}
	decl, err := json.Marshal(tools.OpenAI()[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "first tool, declared for OpenAI: %s\n", decl)

	// 2. Call Calculator.Add the way an agent does: the model picked the
	// tool by name.
	add, ok := tools.Lookup("Calculator_Add")
	if !ok {
		return errors.New("the server has no Calculator_Add tool")
	}
	sum, err := client.CallAs[float64](ctx, c, add.ID, AddInput{A: 10, B: 5}, nil)
	if err != nil {
		return fmt.Errorf("calling %s: %w", add.ID, err)
	}
	if sum != 15 {
		return fmt.Errorf("%s(10, 5) = %v, want 15", add.ID, sum)
	}
	fmt.Fprintf(out, "%s(10, 5) = %v\n", add.ID, sum)

	// 3. A validation error: the server refuses the call and says which
	// parameter is wrong.
	_, err = c.Call(ctx, "Calculator.Add", map[string]any{"a": 10, "b": "infinity"}, nil)
	var refused *otc.Error
	if !errors.As(err, &refused) || refused.Code != otc.CodeInvalidInput || refused.ParameterErrors["b"] == "" {
		return fmt.Errorf(`calling Calculator.Add with b="infinity": want a validation error on "b", got %v`, err)
	}
	fmt.Fprintf(out, "validation error, as expected: %s (b: %s)\n", refused.Message, refused.ParameterErrors["b"])

	// 4. A tool error with a retry hint: what the model should be told.
	_, err = c.Call(ctx, "Doorbell.Ring", map[string]any{"doorbell_id": "doorbell1"}, nil)
	var failed *otc.ToolError
	if !errors.As(err, &failed) || !failed.CanRetry || failed.RetryAfter != 500*time.Millisecond {
		return fmt.Errorf("ringing doorbell1: want a retryable tool error after 500ms, got %v", err)
	}
	fmt.Fprintf(out, "tool error, as expected: %s; can retry after %v; hint for the model: %q\n",
		failed.Message, failed.RetryAfter, failed.AdditionalPromptContent)

	// 5. A retry of that hint: the model picks a doorbell from the hint.
	res, err := c.Call(ctx, "Doorbell.Ring", map[string]any{"doorbell_id": "doorbell42"}, nil)
	if err != nil {
		return fmt.Errorf("ringing doorbell42: %w", err)
	}
	fmt.Fprintf(out, "rang doorbell42 (call %s, %v)\n", res.CallID, res.Duration)
	return nil
}

// credentialsHint says which flags to pass when the server refused the
// request for want of credentials, and "" for any other failure.
func credentialsHint(err error, opts *client.Options) string {
	var e *otc.Error
	if !errors.As(err, &e) || e.Code != otc.CodeUnauthenticated {
		return ""
	}
	if opts == nil || opts.APIKey == "" && opts.JWT == nil {
		return "; the server requires credentials: pass -api-key, or -jwt-secret and -jwt-audience"
	}
	return "; the server refused the credentials: check -api-key, -jwt-secret and -jwt-audience against its OTC_API_KEY, OTC_JWT_SECRET and OTC_JWT_AUDIENCE"
}
