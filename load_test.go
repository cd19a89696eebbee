package otc_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/otcgo/otc/internal/testkit"
)

// TestLoadConcurrentCalls sends 2,000 calls at once over real HTTP, a mix
// of successes and refusals through both the OTC handler and the REST
// view, and checks every answer against the call that asked for it. Once
// the server and the client are closed, no goroutine may be left behind.
// It is not parallel, so that the goroutines it counts are its own.
func TestLoadConcurrentCalls(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	const calls = 2000
	f := newHardFixture(t, 0, nil, nil)
	tr := &http.Transport{MaxIdleConnsPerHost: calls}
	client := &http.Client{Transport: tr}
	// Close both ends before the leak check, even when a check fails.
	defer func() {
		tr.CloseIdleConnections()
		f.srv.Close()
	}()

	start := make(chan struct{})
	errs := make([]error, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			<-start
			errs[i] = loadCall(client, f.srv.URL, i)
		})
	}
	close(start)
	wg.Wait()

	failed := 0
	for i, err := range errs {
		if err != nil {
			failed++
			if failed <= 10 {
				t.Errorf("call %d: %v", i, err)
			}
		}
	}
	require.Zero(t, failed, "%d of %d calls got a wrong answer", failed, calls)
}

// loadCall sends call number i, whose kind is chosen by i, and checks its
// answer.
func loadCall(c *http.Client, base string, i int) error {
	a, b := i, 3*i+1
	callID := "load-" + strconv.Itoa(i)
	var path, body string
	var status int
	var check func(doc map[string]json.RawMessage) error
	switch i % 5 {
	case 0: // an OTC success, whose value depends on i
		path, status = "/otc/call", http.StatusOK
		body = fmt.Sprintf(`{"request":{"tool_id":"Calculator.Add","call_id":%q,"input":{"a":%d,"b":%d}}}`, callID, a, b)
		check = func(doc map[string]json.RawMessage) error {
			var r struct {
				Result struct {
					CallID  string  `json:"call_id"`
					Success bool    `json:"success"`
					Value   float64 `json:"value"`
				} `json:"result"`
			}
			if err := remarshal(doc, &r); err != nil {
				return err
			}
			if !r.Result.Success || r.Result.Value != float64(a+b) || r.Result.CallID != callID {
				return fmt.Errorf("want success, value %d and call id %s", a+b, callID)
			}
			return nil
		}
	case 1: // an OTC parameter error
		path, status = "/otc/call", http.StatusUnprocessableEntity
		body = fmt.Sprintf(`{"request":{"tool_id":"Calculator.Add","input":{"a":"x%d","b":%d}}}`, i, b)
		check = func(doc map[string]json.RawMessage) error {
			var r struct {
				Message         string            `json:"message"`
				ParameterErrors map[string]string `json:"parameter_errors"`
			}
			if err := remarshal(doc, &r); err != nil {
				return err
			}
			if r.Message == "" || len(r.ParameterErrors) != 1 || r.ParameterErrors["a"] == "" {
				return fmt.Errorf("want a message and a parameter error about a alone")
			}
			return nil
		}
	case 2: // a REST success
		path, status = "/v1/tools/Calculator_Add:invoke", http.StatusOK
		body = fmt.Sprintf(`{"schema_version":"0.1.0","args":{"a":%d,"b":%d}}`, a, b)
		check = func(doc map[string]json.RawMessage) error {
			var r struct {
				OK     bool    `json:"ok"`
				Result float64 `json:"result"`
			}
			if err := remarshal(doc, &r); err != nil {
				return err
			}
			if !r.OK || r.Result != float64(a+b) {
				return fmt.Errorf("want ok and result %d", a+b)
			}
			return nil
		}
	case 3: // an OTC call of a tool that does not exist
		path, status = "/otc/call", http.StatusBadRequest
		body = fmt.Sprintf(`{"request":{"tool_id":"Nope.Tool%d","input":{}}}`, i)
		check = func(doc map[string]json.RawMessage) error {
			var r struct {
				Message          string `json:"message"`
				DeveloperMessage string `json:"developer_message"`
			}
			if err := remarshal(doc, &r); err != nil {
				return err
			}
			if want := "Nope.Tool" + strconv.Itoa(i) + " is not registered"; r.DeveloperMessage != want || r.Message == "" {
				return fmt.Errorf("want a message and the developer message %q", want)
			}
			return nil
		}
	case 4: // an OTC call whose tool reports its own ids
		path, status = "/otc/call", http.StatusOK
		body = fmt.Sprintf(`{"request":{"tool_id":"Meta.Inspect","call_id":%q,"trace_id":"trace-%d","input":{}}}`, callID, i)
		check = func(doc map[string]json.RawMessage) error {
			var r struct {
				Result struct {
					Value testkit.InspectOutput `json:"value"`
				} `json:"result"`
			}
			if err := remarshal(doc, &r); err != nil {
				return err
			}
			v := r.Result.Value
			if v.CallID != callID || v.TraceID != "trace-"+strconv.Itoa(i) || v.ToolID != "Meta.Inspect@1.0.0" {
				return fmt.Errorf("the tool saw ids %+v", v)
			}
			return nil
		}
	}

	resp, err := c.Post(base+path, "application/json", bytes.NewBufferString(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != status {
		return fmt.Errorf("status %d, want %d: %s", resp.StatusCode, status, raw)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("answer is not a JSON object: %v: %s", err, raw)
	}
	if err := check(doc); err != nil {
		return fmt.Errorf("%v; got %s", err, raw)
	}
	return nil
}

// remarshal decodes a parsed answer into v.
func remarshal(doc map[string]json.RawMessage, v any) error {
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
