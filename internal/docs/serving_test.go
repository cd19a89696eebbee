package docs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/mount"
)

// What the handler answers: the catalog, then a call.
func Example_handler() {
	reg := calculator(nil)
	mux := http.NewServeMux()
	mux.Handle("/otc/", http.StripPrefix("/otc", otc.NewHandler(reg, nil)))

	send(mux, "GET", "/otc/tools", "", nil)
	send(mux, "POST", "/otc/tools/call",
		`{"request":{"call_id":"call-1","tool_id":"Calculator.Add","input":{"a":10,"b":5}}}`, nil)
	send(mux, "GET", "/otc/health", "", nil)
	// Output:
	// 200
	// {"$schema":"otc://1.0","tools":[{"id":"Calculator.Add@1.0.0","name":"Calculator_Add","description":"Adds two numbers together.","version":"1.0.0","input_schema":{"parameters":{"properties":{"a":{"type":"number","description":"The first number to add."},"b":{"type":"number","description":"The second number to add."}},"additionalProperties":false,"type":"object","required":["a","b"]}},"output_schema":{"type":"number"}}]}
	// 200
	// {"$schema":"otc://1.0","result":{"call_id":"call-1","duration":…,"success":true,"value":15}}
	// 200
	// {"$schema":"otc://1.0","status":"ok"}
}

// Every wire format of one registry on one mux.
func Example_mount() {
	reg := calculator(nil)
	a, err := auth.NewAPIKeyAuth(map[string]string{"ci": "a-long-random-key-for-the-ci-job"})
	if err != nil {
		panic(err)
	}
	// docs:start mount
	mux := http.NewServeMux()
	h := mount.All(mux, reg, &mount.Options{Authenticator: a}) // a guards every format
	// h.OTC, h.MCP, h.REST, h.Registry: the handlers, e.g. for mount.ServeOptions.Drain
	// docs:end mount

	_ = h
	for _, path := range []string{"/otc/tools", "/v1/tools", "/registry/v1/tools"} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set(otc.HeaderAPIKey, "a-long-random-key-for-the-ci-job")
		mux.ServeHTTP(rec, req)
		fmt.Println(path, rec.Code)
	}
	// Output:
	// /otc/tools 200
	// /v1/tools 200
	// /registry/v1/tools 200
}

// The options of the handler and of the registry.
func Example_options() {
	// docs:start options
	reg := otc.NewRegistry(&otc.RegistryOptions{
		Logger: slog.New(slog.NewJSONHandler(os.Stderr, nil)), // tool panics, with their stacks
	})
	h := otc.NewHandler(reg, &otc.HandlerOptions{
		MaxBodyBytes: 1 << 20,        // 413 above 1 MiB (default 4 MiB)
		Schema:       otc.SchemaOXP,  // "$schema" of answers to requests that send none
		IncludeItems: true,           // the catalog under "items" too, as the OXP OpenAPI file names it
		Logger:       slog.Default(), // faults of the handler itself
	})
	// docs:end options

	send(h, "GET", "/tools", "", nil)
	// Output:
	// 200
	// {"$schema":"urn:oxp:1.0","tools":[],"items":[]}
}

// A tool that returns nothing, and one that returns any JSON value.
func Example_outputs() {
	reg := otc.NewRegistry(nil)
	// docs:start outputs
	type ringInput struct {
		DoorbellID string `json:"doorbell_id" jsonschema:"description=The doorbell to ring."`
	}
	err := otc.Register(reg, otc.Tool{ID: "Doorbell.Ring", Version: "1.0.0", Description: "Rings a doorbell."},
		func(ctx context.Context, in ringInput) (otc.NoOutput, error) {
			return otc.NoOutput{}, nil // output_schema null: success carries no value
		})
	if err != nil {
		panic(err)
	}
	err = otc.Register(reg, otc.Tool{ID: "Config.Get", Version: "1.0.0", Description: "Reads a setting."},
		func(ctx context.Context, in struct{}) (any, error) {
			return map[string]any{"retries": 3}, nil // output_schema {}: any JSON value
		})
	// docs:end outputs
	if err != nil {
		panic(err)
	}
	for _, def := range reg.Tools() {
		out, _ := json.Marshal(def.OutputSchema)
		fmt.Printf("%s %s %s\n", def.ID, def.InputSchema.Parameters, out)
	}
	// Output:
	// Config.Get@1.0.0 {"properties":{},"additionalProperties":false,"type":"object"} {}
	// Doorbell.Ring@1.0.0 {"properties":{"doorbell_id":{"type":"string","description":"The doorbell to ring."}},"additionalProperties":false,"type":"object","required":["doorbell_id"]} null
}

// A tool that needs a secret and a user id declares them, and reads them
// from its context; a call without them is refused before the tool runs.
func Example_requirements() {
	reg := otc.NewRegistry(nil)
	// docs:start requirements
	type sendInput struct {
		Text string `json:"text" jsonschema:"description=The message to send."`
	}
	err := otc.Register(reg, otc.Tool{
		ID:          "Sms.Send",
		Version:     "1.0.0",
		Description: "Sends a text message to the user.",
		Requirements: &otc.Requirements{
			Secrets: []otc.SecretRequirement{{ID: "SMS_API_KEY"}},
			UserID:  true,
		},
	}, func(ctx context.Context, in sendInput) (string, error) {
		key, _ := otc.Secret(ctx, "SMS_API_KEY") // present: the call was checked
		return fmt.Sprintf("sent to %s with a key of %d bytes", otc.UserID(ctx), len(key)), nil
	})
	// docs:end requirements
	if err != nil {
		panic(err)
	}
	h := otc.NewHandler(reg, nil)

	send(h, "POST", "/call", `{"request":{"tool_id":"Sms.Send","input":{"text":"hi"}}}`, nil)
	send(h, "POST", "/call", `{"request":{"tool_id":"Sms.Send","call_id":"c1","input":{"text":"hi"},`+
		`"context":{"user_id":"u1","secrets":[{"id":"SMS_API_KEY","value":"k-123"}]}}}`, nil)
	// Output:
	// 400
	// {"$schema":"otc://1.0","message":"Tool 'Sms_Send' cannot run without secret SMS_API_KEY, a user id","developer_message":"Sms.Send@1.0.0 requires secret SMS_API_KEY, a user id in the call context","missing_requirements":{"secrets":[{"id":"SMS_API_KEY"}],"user_id":true}}
	// 200
	// {"$schema":"otc://1.0","result":{"call_id":"c1","duration":…,"success":true,"value":"sent to u1 with a key of 5 bytes"}}
}
