package a2a_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/a2a"
)

// A registry served as an A2A agent, and a message that calls one of its
// tools over the JSON-RPC binding.
func ExampleNewHandler() {
	reg := otc.NewRegistry(nil)
	if err := otc.Register(reg, otc.Tool{ID: "Greeter.Hello", Version: "1.0.0", Description: "Says hello."},
		func(_ context.Context, in struct {
			Name string `json:"name" jsonschema:"description=Who to greet."`
		}) (string, error) {
			return "hello " + in.Name, nil
		}); err != nil {
		log.Fatal(err)
	}
	// docs:start mount
	mux := http.NewServeMux()
	h := http.StripPrefix("/a2a", a2a.NewHandler(reg, nil))
	mux.Handle("/a2a", h)  // the JSON-RPC binding
	mux.Handle("/a2a/", h) // the HTTP+JSON binding and the Agent Card
	// docs:end mount
	srv := httptest.NewServer(mux)
	defer srv.Close()

	// docs:start call
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{
	  "messageId":"9f1c","role":"ROLE_USER",
	  "parts":[{"data":{"tool":"Greeter_Hello","input":{"name":"Ada"}}}]}}}`
	// docs:end call
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/a2a", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, strings.Contains(string(b), `"io.github.otcgo/outcome":"succeeded"`), strings.Contains(string(b), `{"text":"hello Ada"}`))
	// Output: 200 true true
}

// Push notifications: a message names a webhook in its configuration, and
// the webhook is posted each change of the task's state, signed with the
// agent's key.
func ExamplePushOptions() {
	reg := otc.NewRegistry(nil)
	if err := otc.Register(reg, otc.Tool{ID: "Report.Build", Version: "1.0.0", Description: "Builds a report.", Tasks: otc.TasksOptional},
		func(context.Context, struct{}) (string, error) { return "report ready", nil }); err != nil {
		log.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		log.Fatal(err)
	}
	// docs:start push
	h := a2a.NewHandler(reg, &a2a.Options{
		URL: "https://agent.example.com/a2a", // the issuer of the signed deliveries
		Push: &a2a.PushOptions{
			SigningKey: key, // signs each delivery; its JWKS is at /.well-known/jwks.json
			// Webhooks must be on public addresses; this example's is on
			// the loopback.
			AllowedNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		},
	})
	// docs:end push
	agent := httptest.NewServer(h)
	defer agent.Close()

	states := make(chan string, 10)
	webhook := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		var posted struct {
			Task struct {
				Status struct{ State string } `json:"status"`
			} `json:"task"`
		}
		_ = json.NewDecoder(r.Body).Decode(&posted)
		states <- posted.Task.Status.State + " signed=" + fmt.Sprint(strings.HasPrefix(r.Header.Get("Authorization"), "Bearer "))
	}))
	defer webhook.Close()

	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{
	  "message":{"messageId":"r1","role":"ROLE_USER","parts":[{"data":{"tool":"Report_Build","input":{}}}]},
	  "configuration":{"returnImmediately":true,"taskPushNotificationConfig":{"url":"` + webhook.URL + `","token":"t-1"}}}}`
	req, _ := http.NewRequest(http.MethodPost, agent.URL, strings.NewReader(body))
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	for s := range states {
		if strings.HasPrefix(s, "TASK_STATE_COMPLETED") {
			fmt.Println(s)
			break
		}
	}
	// Output: TASK_STATE_COMPLETED signed=true
}
