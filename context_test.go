package otc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
)

// otherCtxKey is a context key of the tests' own, for a value that a tool
// or a caller adds to a context for its own purposes. A named type, as
// context.WithValue asks, so that it cannot collide with another
// package's key.
type otherCtxKey struct{}

// seenContext is what a tool function read from its context.
type seenContext struct {
	callID, traceID, userID, toolID string
	secrets, tokens                 map[string]string
	missingSecrets, missingTokens   []string
}

// readContext reads every accessor, looking up the given secret and token
// ids.
func readContext(ctx context.Context, secretIDs, tokenIDs []string) seenContext {
	s := seenContext{
		callID: otc.CallID(ctx), traceID: otc.TraceID(ctx), userID: otc.UserID(ctx), toolID: otc.ToolID(ctx),
		secrets: map[string]string{}, tokens: map[string]string{},
	}
	for _, id := range secretIDs {
		if v, ok := otc.Secret(ctx, id); ok {
			s.secrets[id] = v
		} else {
			s.missingSecrets = append(s.missingSecrets, id)
		}
	}
	for _, id := range tokenIDs {
		if v, ok := otc.AuthorizationToken(ctx, id); ok {
			s.tokens[id] = v
		} else {
			s.missingTokens = append(s.missingTokens, id)
		}
	}
	return s
}

func TestContextAccessorsInsideATool(t *testing.T) {
	t.Parallel()
	secretIDs := []string{"SIGNING_KEY", "OTHER_KEY", "signing_key"}
	tokenIDs := []string{"google", "github"}
	seen := make(chan seenContext, 1)
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Signer.Sign", Version: "1.2.0", Description: "Signs.",
		Requirements: &otc.Requirements{
			Secrets:       []otc.SecretRequirement{{ID: "SIGNING_KEY"}},
			Authorization: []otc.AuthorizationRequirement{{ID: "google"}},
		},
	}, func(ctx context.Context, _ otc.NoOutput) (otc.NoOutput, error) {
		// Values survive the contexts a tool derives for its own work.
		ctx, cancel := context.WithCancel(context.WithValue(ctx, otherCtxKey{}, "x"))
		defer cancel()
		seen <- readContext(ctx, secretIDs, tokenIDs)
		return otc.NoOutput{}, nil
	}))

	res, err := reg.Call(context.Background(), &otc.CallRequest{
		ToolID: "Signer.Sign", CallID: "call-7", TraceID: "trace-9",
		Context: otc.CallContext{
			// The caller sends more than the tool declared.
			Secrets:       []otc.ToolSecret{{ID: "SIGNING_KEY", Value: "k1"}, {ID: "OTHER_KEY", Value: "k2"}},
			Authorization: []otc.ToolAuthorization{{ID: "google", Token: "t1"}, {ID: "github", Token: "t2"}},
			UserID:        "user@example.com",
		},
	})
	require.NoError(t, err)
	require.Nil(t, res.Error)
	got := <-seen
	assert.Equal(t, "call-7", got.callID)
	assert.Equal(t, "trace-9", got.traceID)
	assert.Equal(t, "user@example.com", got.userID)
	assert.Equal(t, "Signer.Sign@1.2.0", got.toolID, "the full id, whatever form the call used")
	assert.Equal(t, map[string]string{"SIGNING_KEY": "k1"}, got.secrets)
	assert.Equal(t, map[string]string{"google": "t1"}, got.tokens)
	// Undeclared secrets and tokens stay invisible even when sent, and ids
	// match exactly.
	assert.Equal(t, []string{"OTHER_KEY", "signing_key"}, got.missingSecrets)
	assert.Equal(t, []string{"github"}, got.missingTokens)
}

func TestContextAccessorsWithoutRequirements(t *testing.T) {
	t.Parallel()
	seen := make(chan seenContext, 1)
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Echo.Echo", Version: "1.0.0", Description: "Echoes."},
		func(ctx context.Context, _ otc.NoOutput) (otc.NoOutput, error) {
			seen <- readContext(ctx, []string{"SIGNING_KEY"}, []string{"google"})
			return otc.NoOutput{}, nil
		}))
	res, err := reg.Call(context.Background(), &otc.CallRequest{
		ToolID: "Echo.Echo",
		Context: otc.CallContext{
			Secrets:       []otc.ToolSecret{{ID: "SIGNING_KEY", Value: "k1"}},
			Authorization: []otc.ToolAuthorization{{ID: "google", Token: "t1"}},
			UserID:        "u1",
		},
	})
	require.NoError(t, err)
	got := <-seen
	assert.Equal(t, res.CallID, got.callID, "the generated call id is the one the tool sees")
	assert.Regexp(t, registryUUIDv4, got.callID)
	assert.Empty(t, got.traceID)
	// A user id needs no declaration: it is not a credential.
	assert.Equal(t, "u1", got.userID)
	assert.Equal(t, "Echo.Echo@1.0.0", got.toolID)
	assert.Empty(t, got.secrets)
	assert.Empty(t, got.tokens)
}

func TestContextAccessorsOutsideACall(t *testing.T) {
	t.Parallel()
	for name, ctx := range map[string]context.Context{
		"background": context.Background(),
		"todo":       context.TODO(),
		"derived":    context.WithValue(context.Background(), otherCtxKey{}, "x"),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			assert.Empty(t, otc.CallID(ctx))
			assert.Empty(t, otc.TraceID(ctx))
			assert.Empty(t, otc.UserID(ctx))
			assert.Empty(t, otc.ToolID(ctx))
			v, ok := otc.Secret(ctx, "SIGNING_KEY")
			assert.False(t, ok)
			assert.Empty(t, v)
			v, ok = otc.AuthorizationToken(ctx, "google")
			assert.False(t, ok)
			assert.Empty(t, v)
		})
	}
}

func TestContextDoesNotLeakBetweenCalls(t *testing.T) {
	t.Parallel()
	seen := make(chan seenContext, 2)
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Signer.Sign", Version: "1.0.0", Description: "Signs.",
		Requirements: &otc.Requirements{Secrets: []otc.SecretRequirement{{ID: "SIGNING_KEY"}}},
	}, func(ctx context.Context, _ otc.NoOutput) (otc.NoOutput, error) {
		seen <- readContext(ctx, []string{"SIGNING_KEY"}, nil)
		return otc.NoOutput{}, nil
	}))
	for _, v := range []string{"first", "second"} {
		_, err := reg.Call(context.Background(), &otc.CallRequest{
			ToolID: "Signer.Sign", TraceID: "trace-" + v,
			Context: otc.CallContext{Secrets: []otc.ToolSecret{{ID: "SIGNING_KEY", Value: "key-" + v}}},
		})
		require.NoError(t, err)
	}
	first, second := <-seen, <-seen
	assert.Equal(t, "key-first", first.secrets["SIGNING_KEY"])
	assert.Equal(t, "trace-first", first.traceID)
	assert.Equal(t, "key-second", second.secrets["SIGNING_KEY"])
	assert.Equal(t, "trace-second", second.traceID)
	assert.NotEqual(t, first.callID, second.callID)
}

const (
	redactedSecretValue = "sk-live-SECRET-4f1c"
	redactedTokenValue  = "ya29.TOKEN-a1b2"
)

func TestSecretsAreRedacted(t *testing.T) {
	t.Parallel()
	secret := otc.ToolSecret{ID: "TWILIO_API_KEY", Value: redactedSecretValue}
	auth := otc.ToolAuthorization{ID: "google", Token: redactedTokenValue}
	cc := otc.CallContext{Secrets: []otc.ToolSecret{secret}, Authorization: []otc.ToolAuthorization{auth}, UserID: "u1"}
	req := otc.CallRequest{ToolID: "Mail.Send", Context: cc}

	values := map[string]any{
		"secret":         secret,
		"secret_pointer": &secret,
		"auth":           auth,
		"auth_pointer":   &auth,
		"call_context":   cc,
		"call_request":   req,
		"request_ptr":    &req,
		"in_slice":       []any{secret, auth},
		"in_map":         map[string]otc.ToolSecret{"k": secret},
	}
	for name, v := range values {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
				out := fmt.Sprintf(verb, v)
				assert.NotContains(t, out, redactedSecretValue, "%s leaks the secret: %s", verb, out)
				assert.NotContains(t, out, redactedTokenValue, "%s leaks the token: %s", verb, out)
			}
			assert.NotContains(t, fmt.Sprint(v), redactedSecretValue)
			assert.NotContains(t, fmt.Sprintln(v), redactedTokenValue)
		})
	}
	// The ids stay visible: they say what was sent.
	assert.Contains(t, fmt.Sprintf("%v", secret), "TWILIO_API_KEY")
	assert.Contains(t, fmt.Sprintf("%#v", auth), "google")
}

func TestSecretsAreRedactedInLogs(t *testing.T) {
	t.Parallel()
	secret := otc.ToolSecret{ID: "TWILIO_API_KEY", Value: redactedSecretValue}
	auth := otc.ToolAuthorization{ID: "google", Token: redactedTokenValue}
	handlers := map[string]func(*bytes.Buffer) slog.Handler{
		"json": func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
		"text": func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
	}
	for name, newHandler := range handlers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			logger := slog.New(newHandler(&buf))
			logger.Info("calling", "secret", secret, "auth", auth)
			logger.Info("calling", slog.Any("secret_ptr", &secret), slog.Any("auth_ptr", &auth))
			logger.With("secret", secret).Info("calling")
			logger.Info("calling", slog.Group("ctx", "secret", secret, "auth", auth))
			// A whole call context or request, by value and by pointer: the
			// JSON handler would encode their fields with encoding/json.
			cc := otc.CallContext{UserID: "u1", Secrets: []otc.ToolSecret{secret}, Authorization: []otc.ToolAuthorization{auth}}
			req := otc.CallRequest{ToolID: "Sms.Send", Context: cc}
			logger.Info("calling", "cc", cc, "cc_ptr", &cc, "req", req, "req_ptr", &req)
			out := buf.String()
			assert.NotContains(t, out, redactedSecretValue)
			assert.NotContains(t, out, redactedTokenValue)
			assert.Contains(t, out, "TWILIO_API_KEY")
			assert.Contains(t, out, "google")
		})
	}
	t.Run("json_shape", func(t *testing.T) {
		t.Parallel()
		var buf bytes.Buffer
		slog.New(slog.NewJSONHandler(&buf, nil)).Info("calling", "secret", secret)
		var line struct {
			Secret map[string]string `json:"secret"`
		}
		require.NoError(t, json.Unmarshal(buf.Bytes(), &line))
		assert.Equal(t, map[string]string{"id": "TWILIO_API_KEY", "value": "[redacted]"}, line.Secret)
	})
}

func TestSecretsStillMarshalToJSON(t *testing.T) {
	t.Parallel()
	// A client must send the values, so JSON carries them.
	cc := otc.CallContext{
		Secrets:       []otc.ToolSecret{{ID: "TWILIO_API_KEY", Value: redactedSecretValue}},
		Authorization: []otc.ToolAuthorization{{ID: "google", Token: redactedTokenValue}},
		UserID:        "u1",
	}
	b, err := json.Marshal(cc)
	require.NoError(t, err)
	assert.JSONEq(t, `{
		"authorization": [{"id": "google", "token": "`+redactedTokenValue+`"}],
		"secrets": [{"id": "TWILIO_API_KEY", "value": "`+redactedSecretValue+`"}],
		"user_id": "u1"
	}`, string(b))

	var back otc.CallContext
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, cc, back)

	// An empty context marshals to an empty object (every field omitempty).
	b, err = json.Marshal(otc.CallContext{})
	require.NoError(t, err)
	assert.JSONEq(t, `{}`, string(b))
}
