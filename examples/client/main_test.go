package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
)

// mainArgsEnv, when set, makes the test binary run main() with these
// arguments instead of the tests, so that TestMain_ExitCode can run the
// real program as a child process.
const mainArgsEnv = "CLIENT_EXAMPLE_TEST_MAIN_ARGS"

func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv(mainArgsEnv); ok {
		os.Args = append([]string{os.Args[0]}, strings.Fields(args)...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// server describes a tool server like examples/calculator (which, being a
// package main, cannot be imported), with knobs to make it misbehave.
type server struct {
	add       func(a, b float64) float64 // nil: no Calculator.Add
	ringError *otc.ToolError             // the error for an unknown doorbell
	noRing    bool                       // no Doorbell.Ring
	// looseAdd gives Calculator.Add a schema that accepts any a and b, so
	// the server never reports the validation error the program expects.
	looseAdd bool
	// auth, when set, requires credentials, as the example server does
	// when OTC_API_KEY or OTC_JWT_SECRET is set.
	auth otc.Authenticator
}

// calculator is examples/calculator's behaviour: the seeds' Calculator.Add
// and Doorbell.Ring (seed 002's tool execution error).
func calculator() server {
	return server{
		add: func(a, b float64) float64 { return a + b },
		ringError: &otc.ToolError{
			Message:                 "Doorbell ID not found",
			DeveloperMessage:        "The doorbell does not exist.",
			CanRetry:                true,
			AdditionalPromptContent: "ids: doorbell42,doorbell84",
			RetryAfter:              500 * time.Millisecond,
		},
	}
}

func (s server) start(t *testing.T) string {
	t.Helper()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	if s.add != nil {
		tool := otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers together."}
		if s.looseAdd {
			tool.InputSchema = json.RawMessage(`{"type":"object","properties":{"a":{"description":"The first number to add."},"b":{"description":"The second number to add."}}}`)
			require.NoError(t, otc.Register(reg, tool, func(_ context.Context, in map[string]any) (float64, error) {
				a, _ := in["a"].(float64)
				b, _ := in["b"].(float64)
				return s.add(a, b), nil
			}))
		} else {
			require.NoError(t, otc.Register(reg, tool, func(_ context.Context, in calcAddInput) (float64, error) {
				return s.add(in.A, in.B), nil
			}))
		}
	}
	if !s.noRing {
		require.NoError(t, otc.Register(reg, otc.Tool{
			ID: "Doorbell.Ring", Version: "0.1.0", Description: "Rings a doorbell given a doorbell ID.",
		}, func(_ context.Context, in RingInput) (otc.NoOutput, error) {
			if in.DoorbellID != "doorbell42" && in.DoorbellID != "doorbell84" {
				return otc.NoOutput{}, s.ringError
			}
			return otc.NoOutput{}, nil
		}))
	}
	srv := httptest.NewServer(otc.NewHandler(reg, &otc.HandlerOptions{Authenticator: s.auth}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// calcAddInput is the server's input of Calculator.Add (the program's
// AddInput has no schema descriptions: it is only ever encoded).
type calcAddInput struct {
	A float64 `json:"a" jsonschema:"description=The first number to add."`
	B float64 `json:"b" jsonschema:"description=The second number to add."`
}

// RingInput is the input of Doorbell.Ring.
type RingInput struct {
	DoorbellID string `json:"doorbell_id" jsonschema:"description=The ID of the doorbell to ring."`
}

func TestRun(t *testing.T) {
	t.Parallel()
	url := calculator().start(t)
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), url, nil, &out))

	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	require.Len(t, lines, 8, out.String())
	assert.Equal(t, []string{
		"2 tools:",
		"  Calculator.Add@1.0.0  Adds two numbers together.",
		"  Doorbell.Ring@0.1.0  Rings a doorbell given a doorbell ID.",
	}, lines[:3])

	decl, ok := strings.CutPrefix(lines[3], "first tool, declared for OpenAI: ")
	require.True(t, ok, lines[3])
	var openai struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	require.NoError(t, json.Unmarshal([]byte(decl), &openai))
	assert.Equal(t, "function", openai.Type)
	assert.Equal(t, "Calculator_Add", openai.Function.Name)
	assert.Equal(t, "Adds two numbers together.", openai.Function.Description)
	assert.Contains(t, string(openai.Function.Parameters), `"type":"object"`)

	assert.Equal(t, []string{
		"Calculator.Add@1.0.0(10, 5) = 15",
		"validation error, as expected: Some input parameters are invalid (b: Must be a number)",
		`tool error, as expected: Doorbell ID not found; can retry after 500ms; hint for the model: "ids: doorbell42,doorbell84"`,
	}, lines[4:7])
	assert.Regexp(t, `^rang doorbell42 \(call [0-9a-f-]{36}, [0-9.]+[µnm]?s\)$`, lines[7])
}

func TestRun_Fails(t *testing.T) {
	t.Parallel()
	notRetryable := calculator()
	notRetryable.ringError = &otc.ToolError{Message: "Doorbell ID not found"}
	wrongWait := calculator()
	wrongWait.ringError = &otc.ToolError{Message: "Doorbell ID not found", CanRetry: true, RetryAfter: time.Second}
	wrongSum := calculator()
	wrongSum.add = func(a, b float64) float64 { return a + b + 1 }
	noAdd := calculator()
	noAdd.add = nil
	noRing := calculator()
	noRing.noRing = true
	noTools := server{noRing: true}
	noValidation := calculator()
	noValidation.looseAdd = true

	for _, tc := range []struct {
		name   string
		server server
		want   string // in the error
	}{
		{"wrong_sum", wrongSum, "= 16, want 15"},
		{"ring_not_retryable", notRetryable, "want a retryable tool error"},
		{"ring_wrong_wait", wrongWait, "after 500ms"},
		{"no_add", noAdd, "no Calculator_Add"},
		{"no_ring", noRing, "Doorbell.Ring"},
		{"no_tools", noTools, "no tools"},
		{"no_validation_error", noValidation, `want a validation error on "b"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			err := run(t.Context(), tc.server.start(t), nil, &out)
			require.Error(t, err, out.String())
			assert.Contains(t, err.Error(), tc.want)
		})
	}

	t.Run("bad_url", func(t *testing.T) {
		t.Parallel()
		err := run(t.Context(), "ftp://127.0.0.1", nil, new(bytes.Buffer))
		assert.Error(t, err)
	})
	t.Run("server_down", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(nil)
		url := srv.URL
		srv.Close()
		err := run(t.Context(), url, nil, new(bytes.Buffer))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "listing tools")
	})
}

// TestMain_ExitCode runs the program itself: it exits 0 against a working
// server and 1, with the reason on stderr, against a broken one.
func TestMain_ExitCode(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts child processes")
	}
	wrongSum := calculator()
	wrongSum.add = func(a, b float64) float64 { return a * b }
	for _, tc := range []struct {
		name     string
		server   server
		wantCode int
		want     string // in stdout (exit 0) or stderr
	}{
		{"works", calculator(), 0, "rang doorbell42"},
		{"broken", wrongSum, 1, "client: Calculator.Add@1.0.0(10, 5) = 50, want 15"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=-url %s", mainArgsEnv, tc.server.start(t)))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.wantCode, code, "stderr: %s", stderr.String())
			got := stdout.String()
			if tc.wantCode != 0 {
				got = stderr.String()
			}
			assert.Contains(t, got, tc.want)
			if tc.wantCode == 0 {
				assert.True(t, slices.Contains(strings.Split(stdout.String(), "\n"), "2 tools:"))
			}
		})
	}
}
