package docs_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"

	"github.com/otcgo/otc"
)

// The helpers of the guides' examples: what they do is not what the guides
// teach, so no guide includes them.

// AddInput is the input of Calculator.Add, the tool most examples serve.
type AddInput struct {
	A float64 `json:"a" jsonschema:"description=The first number to add."`
	B float64 `json:"b" jsonschema:"description=The second number to add."`
}

func add(ctx context.Context, in AddInput) (float64, error) {
	return in.A + in.B, nil
}

// calculator returns a registry serving Calculator.Add, with opts.
func calculator(opts *otc.RegistryOptions) *otc.Registry {
	reg := otc.NewRegistry(opts)
	err := otc.Register(reg, otc.Tool{
		ID:          "Calculator.Add",
		Version:     "1.0.0",
		Description: "Adds two numbers together.",
	}, add)
	if err != nil {
		panic(err)
	}
	return reg
}

// timings matches the figures of an answer that change from run to run.
var timings = regexp.MustCompile(`"(duration|latency_ms)":[0-9.e+-]+`)

// send makes one request of h, without a network, and prints the status,
// the headers named in show (or that they are absent), and the body, with its timings replaced by
// "…". header holds name and value pairs to send.
func send(h http.Handler, method, target, body string, header []string, show ...string) {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	resp := rec.Result()
	fmt.Println(resp.StatusCode)
	for _, name := range show {
		if v := resp.Header.Get(name); v != "" {
			fmt.Printf("%s: %s\n", name, v)
		} else {
			fmt.Printf("no %s\n", name)
		}
	}
	data, _ := io.ReadAll(resp.Body)
	fmt.Println(timings.ReplaceAllString(strings.TrimSpace(string(data)), `"$1":…`))
}
