package a2a_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/a2a"
)

// FuzzRequest sends arbitrary bodies to both bindings, in both versions:
// the handler never panics, answers every one with JSON, and a JSON-RPC
// answer has exactly one of result and error.
func FuzzRequest(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":{"tool":"Calculator_Add","input":{"a":1,"b":2}}}]}}}`,
		`{"jsonrpc":"2.0","id":"x","method":"message/send","params":{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]}}}`,
		`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":{"tool":"Calculator_Add","input":{"a":"x"}}}]}}`,
		`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}`,
		`{"jsonrpc":"2.0","id":null,"method":"SendMessage"}`,
		`[1,2,3]`, `{`, ``, `{"message":{"parts":[{"data":[]}]}}`,
	} {
		f.Add(seed, true, "1.0")
		f.Add(seed, false, "")
	}
	reg := otc.NewRegistry(nil)
	if err := otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds."},
		func(_ context.Context, in struct {
			A float64 `json:"a" jsonschema:"description=A."`
			B float64 `json:"b" jsonschema:"description=B."`
		}) (float64, error) {
			return in.A + in.B, nil
		}); err != nil {
		f.Fatal(err)
	}
	h := a2a.NewHandler(reg, nil)
	f.Fuzz(func(t *testing.T, body string, rpc bool, version string) {
		path := "/message:send"
		if rpc {
			path = "/"
		}
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if version != "" {
			req.Header.Set("A2A-Version", version)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("status %d, not JSON: %q", rec.Code, rec.Body.String())
		}
		if rpc && rec.Code == http.StatusOK {
			var r map[string]json.RawMessage
			if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
				t.Fatalf("not an object: %s", rec.Body.String())
			}
			_, hasResult := r["result"]
			_, hasError := r["error"]
			if hasResult == hasError {
				t.Fatalf("want exactly one of result and error: %s", rec.Body.String())
			}
		}
	})
}
