package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// The load: workers that call the example's tools through the balancer,
// over OTC, REST and MCP, most calls to Counter.Increment with a call id of
// their own, some to Calculator.Add without one. A call that fails is sent
// again with the same call id until it succeeds or its retry budget is
// spent; a share of the calls that succeeded are sent once more with the
// same id on purpose, and must get the same count back. Some calls are MCP
// 2026-07-28 tasks (Timer.Wait, polled with tasks/get until it ends, or
// cancelled with tasks/cancel) and input_required rounds (Payments.Refund,
// whose question is answered in a second request): each request goes to
// whichever replica the balancer picks, and a task or round that replica
// does not know is an error that no retry hides (tasks.go).

// protocol is a wire format of the example server.
type protocol int

const (
	otcProto protocol = iota
	restProto
	mcpProto
	a2aProto // tasks only: plain calls are spread over the three above
)

func (p protocol) String() string { return [...]string{"otc", "rest", "mcp", "a2a"}[p] }

// attempt is one request of a call.
type attempt struct {
	start, end time.Time
	class      string // "ok", or why it failed
}

// call is one logical call: its attempts, until one succeeded or the
// budget was spent.
type call struct {
	id       string // "" for a call without a call id
	proto    protocol
	counter  bool   // Counter.Increment; otherwise Calculator.Add
	kind     string // "task" or "round" (tasks.go); "" for a plain call
	cancel   bool   // a task cancelled once it runs
	ended    string // how a task ended: completed, cancelled or lost
	taskID   string // an A2A task's id
	phase    string // the phase its first attempt began in
	attempts []attempt
	value    int64 // the answer of the successful attempt
	ok       bool
	replay   bool // a deliberate resend of an id that had succeeded
}

// loader drives the load and keeps every call.
type loader struct {
	base   string
	issuer *issuer
	hook   *pushHook // the webhook A2A tasks name
	client *http.Client
	budget time.Duration // how long a call is retried
	replay float64       // share of successful id'd calls sent again

	mu    sync.Mutex
	calls []*call
	phase string
	// inFlight holds the calls whose attempt is under way, for the
	// crash: the calls in flight when a replica is killed.
	inFlight map[*call]struct{}
}

func newLoader(base string, budget time.Duration, is *issuer) *loader {
	return &loader{
		base:     base,
		issuer:   is,
		budget:   budget,
		replay:   0.1,
		phase:    "steady",
		inFlight: make(map[*call]struct{}),
		client: &http.Client{
			Timeout:   10 * time.Second,
			Transport: &http.Transport{MaxIdleConnsPerHost: 64},
		},
	}
}

func (l *loader) setPhase(p string) {
	l.mu.Lock()
	l.phase = p
	l.mu.Unlock()
}

// inFlightNow returns the calls with an attempt under way.
func (l *loader) inFlightNow() map[*call]bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := make(map[*call]bool, len(l.inFlight))
	for c := range l.inFlight {
		m[c] = true
	}
	return m
}

// run runs workers until ctx ends; calls begun by then are finished
// (retried until their budget is spent).
func (l *loader) run(ctx context.Context, workers int) {
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			r := mrand.New(mrand.NewPCG(mrand.Uint64(), mrand.Uint64()))
			for ctx.Err() == nil {
				c := &call{proto: protocol(r.IntN(3)), counter: r.Float64() < 0.9}
				switch x := r.Float64(); {
				case x < 0.04:
					c = &call{proto: mcpProto, kind: "task", cancel: r.IntN(4) == 0}
				case x < 0.06:
					c = &call{proto: a2aProto, kind: "task", cancel: r.IntN(4) == 0}
				case x < 0.10:
					c = &call{proto: mcpProto, kind: "round"}
				case c.counter:
					c.id = newID()
				}
				l.do(c)
				if c.ok && c.id != "" && r.Float64() < l.replay {
					again := &call{id: c.id, proto: c.proto, counter: true, replay: true}
					l.do(again)
					if again.ok && again.value != c.value {
						again.ok = false
						again.attempts = append(again.attempts, attempt{start: time.Now(), end: time.Now(),
							class: fmt.Sprintf("replay answered %d, the first call %d", again.value, c.value)})
					}
				}
			}
		})
	}
	wg.Wait()
}

// do makes the call, retrying it with the same id until it succeeds or
// its budget is spent.
func (l *loader) do(c *call) {
	l.mu.Lock()
	c.phase = l.phase
	l.calls = append(l.calls, c)
	l.mu.Unlock()
	first := time.Now()
	backoff := 50 * time.Millisecond
	for {
		l.mu.Lock()
		l.inFlight[c] = struct{}{}
		l.mu.Unlock()
		a := attempt{start: time.Now()}
		v, class := l.send(c)
		a.end, a.class = time.Now(), class
		l.mu.Lock()
		delete(l.inFlight, c)
		c.attempts = append(c.attempts, a)
		l.mu.Unlock()
		if class == "ok" {
			c.ok, c.value = true, v
			return
		}
		if fatal(class) || time.Since(first)+backoff > l.budget {
			return
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, 500*time.Millisecond)
	}
}

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "chaos-" + hex.EncodeToString(b[:])
}

// send makes one attempt and returns the answer's value, or why it failed.
func (l *loader) send(c *call) (int64, string) {
	switch c.kind {
	case "task":
		if c.proto == a2aProto {
			return l.sendA2ATask(c)
		}
		return l.sendTask(c)
	case "round":
		return l.sendRound()
	}
	var (
		url, body string
		header    = http.Header{"Content-Type": {"application/json"}, "OXP-API-Key": {chaosAPIKey}}
	)
	tool, input := "Calculator.Add", `{"a":10,"b":5}`
	if c.counter {
		tool, input = "Counter.Increment", `{}`
	}
	name := strings.ReplaceAll(tool, ".", "_")
	switch c.proto {
	case otcProto:
		url = l.base + "/tools/call"
		id := ""
		if c.id != "" {
			id = `"call_id":"` + c.id + `",`
		}
		body = `{"request":{"tool_id":"` + tool + `",` + id + `"input":` + input + `}}`
	case restProto:
		url = l.base + "/v1/tools/" + name + ":invoke"
		body = `{"schema_version":"0.1.0","args":` + input + `}`
		if c.id != "" {
			header.Set("X-Request-Id", c.id)
		}
	case mcpProto:
		url = l.base + "/mcp"
		meta := ""
		if c.id != "" {
			meta = `,"_meta":{"io.github.otcgo/call_id":"` + c.id + `"}`
		}
		body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":` + input + meta + `}}`
		header.Set("Accept", "application/json, text/event-stream")
		header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0, "bad request: " + err.Error()
	}
	req.Header = header
	return answer(l.client, req, c.proto)
}

// answer sends req and reads the tool's answer over proto from the
// response, or says why the attempt failed.
func answer(client *http.Client, req *http.Request, proto protocol) (int64, string) {
	resp, err := client.Do(req)
	if err != nil {
		if detail {
			return 0, "network: " + err.Error()
		}
		return 0, "network"
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, "network"
	}
	if resp.StatusCode != http.StatusOK {
		if detail {
			return 0, fmt.Sprintf("http %d: %.160s", resp.StatusCode, raw)
		}
		return 0, fmt.Sprintf("http %d", resp.StatusCode)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		raw = lastEvent(raw)
	}
	v, class := value(proto, raw)
	if detail && class != "ok" {
		class += fmt.Sprintf(": %.200s", raw)
	}
	return v, class
}

// detail puts the answer in the class of a failure, to debug the
// deployment (CHAOS_DETAIL=1).
var detail = os.Getenv("CHAOS_DETAIL") == "1"

// lastEvent returns the data of the last event of an SSE body.
func lastEvent(raw []byte) []byte {
	var last []byte
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:")); ok {
			last = append(last[:0], bytes.TrimSpace(d)...)
		}
	}
	return last
}

// value reads the tool's answer from a 200 answer of proto, or says why
// it is a failure.
func value(proto protocol, raw []byte) (int64, string) {
	var n json.Number
	switch proto {
	case otcProto:
		var m struct {
			Result struct {
				Success bool
				Value   json.Number
				Error   struct {
					CanRetry bool `json:"can_retry"`
				}
			}
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return 0, "bad answer"
		}
		if !m.Result.Success {
			if m.Result.Error.CanRetry {
				return 0, "tool error, retryable"
			}
			return 0, "tool error"
		}
		n = m.Result.Value
	case restProto:
		var m struct {
			Result *json.Number
			Error  *struct{ Retryable bool }
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return 0, "bad answer"
		}
		if m.Result == nil {
			if m.Error != nil && m.Error.Retryable {
				return 0, "tool error, retryable"
			}
			return 0, "tool error"
		}
		n = *m.Result
	case mcpProto:
		var m struct {
			Result *struct {
				IsError           bool
				StructuredContent struct{ Result json.Number }
			}
			Error *struct{ Code int }
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return 0, "bad answer"
		}
		switch {
		case m.Error != nil:
			return 0, fmt.Sprintf("json-rpc error %d", m.Error.Code)
		case m.Result == nil:
			return 0, "bad answer"
		case m.Result.IsError:
			return 0, "tool error"
		}
		n = m.Result.StructuredContent.Result
	}
	v, err := n.Int64()
	if err != nil {
		return 0, "bad answer"
	}
	return v, "ok"
}
