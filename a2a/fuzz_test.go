package a2a_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
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
		`{"jsonrpc":"2.0","id":2,"method":"ListTasks","params":{"pageSize":2,"status":"TASK_STATE_COMPLETED","includeArtifacts":true}}`,
		`{"jsonrpc":"2.0","id":3,"method":"SubscribeToTask","params":{"id":"t"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"SendMessage","params":{"message":{"messageId":"m2","taskId":"t","role":"ROLE_USER","parts":[{"data":{"input_responses":{"q1":{"action":"accept","content":{}}}}}]}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"SendMessage","params":{"message":{"messageId":"m3","role":"ROLE_USER","parts":[{"data":{"tool":"Job_Quick","input":{}}}]},"configuration":{"returnImmediately":true}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"t","id":"c","url":"https://93.184.216.34/h","token":"x","authentication":{"scheme":"Bearer","credentials":"y"}}}`,
		`{"jsonrpc":"2.0","id":8,"method":"tasks/pushNotificationConfig/set","params":{"taskId":"t","pushNotificationConfig":{"url":"http://[::ffff:7f00:1]/","authentication":{"schemes":["Basic"]}}}}`,
		`{"jsonrpc":"2.0","id":9,"method":"GetTask","params":{"id":"t","historyLength":-1}}`,
		`{"jsonrpc":"2.0","id":10,"method":"SendMessage","params":{"message":{"messageId":"m5","role":"ROLE_USER","parts":[{"data":{"tool":"Job_Quick","input":{}}}]},"configuration":{"historyLength":1,"taskPushNotificationConfig":{"url":"https://1.1.1.1/"}}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"SendStreamingMessage","params":{"message":{"messageId":"m4","role":"ROLE_USER","parts":[{"data":{"tool":"Job_Quick","input":{}}}]}}}`,
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
	if err := otc.Register(reg, otc.Tool{ID: "Job.Quick", Version: "1.0.0", Description: "Runs as a task, quickly.", Tasks: otc.TasksOptional},
		func(context.Context, struct{}) (int, error) { return 1, nil }); err != nil {
		f.Fatal(err)
	}
	// Push notifications on, with every name resolving to loopback and
	// no delivery leaving the process.
	push := &a2a.PushOptions{}
	a2a.SetPushLookup(push, func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	})
	h := a2a.NewHandler(reg, &a2a.Options{Push: push})
	a2a.SetPushTransport(h, roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, errors.New("no network in a fuzz test") }))
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
		if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") {
			for line := range strings.Lines(rec.Body.String()) {
				if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok && !json.Valid([]byte(data)) {
					t.Fatalf("an event that is not JSON: %q", line)
				}
			}
			return
		}
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

// roundTripFunc is an http.RoundTripper of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
