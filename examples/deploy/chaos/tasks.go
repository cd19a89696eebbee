package main

import (
	"encoding/json"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"strings"
	"time"
)

// Tasks and input_required rounds through the balancer (MCP 2026-07-28),
// and tasks over A2A.
// Every request of one goes to whichever replica the balancer picks: a
// task started on one replica is polled and cancelled on others, and the
// answer to a round's question reaches another replica than the one that
// asked. The replicas share the tasks in Redis and the keys that seal the
// rounds' requestState (OTC_REQUEST_STATE_KEYS); a replica that does not
// know a task ("unknown task"), or cannot open a requestState ("lost
// round"), is an error that no retry hides.

// The _meta of a request from a client that takes tasks, and of one that
// answers elicitations.
const (
	taskMeta  = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	roundMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
)

// fatal reports whether a failure's class is one that retrying would
// hide: the promise is that any replica knows every task and round.
func fatal(class string) bool {
	return strings.HasPrefix(class, "unknown task") || strings.HasPrefix(class, "lost round")
}

// sendTask starts a Timer.Wait as a task and follows it to its end over
// tasks/get (cancelling it first when c.cancel), within the budget.
// Failures of tasks/get that the balancer or a restarting replica cause
// are polled through; a replica that says the task is unknown is fatal.
func (l *loader) sendTask(c *call) (int64, string) {
	ms := 20 + mrand.IntN(80)
	token, err := l.issuer.callerToken(fmt.Sprintf("chaos-tasks-%d", mrand.IntN(taskCallers)))
	if err != nil {
		return 0, err.Error()
	}
	res, class := l.mcp2026(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Timer_Wait","arguments":{"ms":%d},%s}}`, ms, taskMeta),
		"tools/call", "Timer_Wait", token)
	if class != "ok" {
		return 0, class
	}
	id, _ := res["taskId"].(string)
	if res["resultType"] != "task" || id == "" {
		return 0, "bad answer: no task"
	}
	deadline := time.Now().Add(l.budget)
	cancelled := !c.cancel
	for time.Now().Before(deadline) {
		if !cancelled {
			_, class := l.mcp2026(`{"jsonrpc":"2.0","id":2,"method":"tasks/cancel","params":{"taskId":"`+id+`",`+taskMeta+`}}`, "tasks/cancel", id, token)
			if fatal(class) {
				return 0, class
			}
			cancelled = class == "ok"
		}
		res, class := l.mcp2026(`{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"`+id+`",`+taskMeta+`}}`, "tasks/get", id, token)
		switch {
		case fatal(class):
			return 0, class
		case class != "ok":
			time.Sleep(50 * time.Millisecond)
			continue
		}
		switch res["status"] {
		case "completed", "cancelled":
			c.ended = res["status"].(string)
			return 0, "ok"
		case "failed":
			// A task whose replica died (killed, or unable to record the
			// outcome while Redis was down) is shown failed once its
			// lease lapses: its outcome is unknown, as promised.
			if msg, _ := res["statusMessage"].(string); strings.Contains(msg, "lease") {
				c.ended = "lost"
				return 0, "ok"
			}
			return 0, fmt.Sprintf("task failed: %.120v", res["error"])
		}
		time.Sleep(50 * time.Millisecond)
	}
	return 0, "task not ended within the budget"
}

// sendA2ATask starts a Timer.Wait as an A2A task (a message with
// returnImmediately) and follows it to its end with GetTask (cancelling
// it first with CancelTask when c.cancel), as sendTask does over MCP: the
// replicas share A2A's tasks in the same Redis store, so a replica that
// answers TaskNotFound is fatal.
func (l *loader) sendA2ATask(c *call) (int64, string) {
	ms := 20 + mrand.IntN(80)
	token, err := l.issuer.callerToken(fmt.Sprintf("chaos-tasks-%d", mrand.IntN(taskCallers)))
	if err != nil {
		return 0, err.Error()
	}
	push := ""
	if l.hook != nil {
		push = fmt.Sprintf(`,"taskPushNotificationConfig":{"url":%q}`, l.hook.url)
	}
	res, class := l.a2a(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":%q,"role":"ROLE_USER","parts":[{"data":{"tool":"Timer_Wait","input":{"ms":%d}}}]},"configuration":{"returnImmediately":true%s}}}`, newID(), ms, push), token)
	if class != "ok" {
		return 0, class
	}
	task, _ := res["task"].(map[string]any)
	id, _ := task["id"].(string)
	if id == "" {
		return 0, fmt.Sprintf("bad answer: no task (%.120v)", res)
	}
	c.taskID = id
	deadline := time.Now().Add(l.budget)
	cancelled := !c.cancel
	for time.Now().Before(deadline) {
		if !cancelled {
			_, class := l.a2a(`{"jsonrpc":"2.0","id":2,"method":"CancelTask","params":{"id":"`+id+`"}}`, token)
			if fatal(class) {
				return 0, class
			}
			cancelled = class == "ok" || strings.Contains(class, "-32002") // ended before it could be cancelled
		}
		res, class := l.a2a(`{"jsonrpc":"2.0","id":3,"method":"GetTask","params":{"id":"`+id+`"}}`, token)
		switch {
		case fatal(class):
			return 0, class
		case class != "ok":
			time.Sleep(50 * time.Millisecond)
			continue
		}
		status, _ := res["status"].(map[string]any)
		switch status["state"] {
		case "TASK_STATE_COMPLETED":
			c.ended = "completed"
			return 0, "ok"
		case "TASK_STATE_CANCELED":
			c.ended = "cancelled"
			return 0, "ok"
		case "TASK_STATE_FAILED":
			if msg := fmt.Sprint(status["message"]); strings.Contains(msg, "lease") {
				c.ended = "lost" // its replica died: its outcome is unknown, as promised
				return 0, "ok"
			}
			if toolError(status["message"]) {
				// The tool ran and answered with an error (Timer.Wait
				// busy at its concurrency limit): the call's outcome, as
				// MCP's task completed with isError is.
				c.ended = "completed"
				return 0, "ok"
			}
			return 0, "task failed: " + firstText(status["message"])
		}
		time.Sleep(50 * time.Millisecond)
	}
	return 0, "task not ended within the budget"
}

// toolError reports whether an A2A status message says the tool failed
// (its failure data part's code is "tool_error"), rather than the call.
func toolError(msg any) bool {
	m, _ := msg.(map[string]any)
	parts, _ := m["parts"].([]any)
	for _, p := range parts {
		part, _ := p.(map[string]any)
		if data, ok := part["data"].(map[string]any); ok && data["code"] == "tool_error" {
			return true
		}
	}
	return false
}

// firstText is the first line of the first text part of an A2A message,
// at most 120 bytes of it.
func firstText(message any) string {
	m, _ := message.(map[string]any)
	parts, _ := m["parts"].([]any)
	for _, p := range parts {
		if text, ok := p.(map[string]any)["text"].(string); ok {
			line, _, _ := strings.Cut(text, "\n")
			return fmt.Sprintf("%.120s", line)
		}
	}
	return "(no text)"
}

// a2a sends one A2A 1.0 JSON-RPC request through the balancer with a
// bearer token, and returns the result, or why the request failed: an
// unknown task's error is "unknown task".
func (l *loader) a2a(body, token string) (map[string]any, string) {
	req, err := http.NewRequest(http.MethodPost, l.base+"/a2a", strings.NewReader(body))
	if err != nil {
		return nil, "bad request: " + err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := l.client.Do(req)
	if err != nil {
		return nil, "network"
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, "network"
	}
	var m struct {
		Result map[string]any
		Error  *struct {
			Code    int
			Message string
		}
	}
	if json.Unmarshal(raw, &m) != nil {
		return nil, fmt.Sprintf("http %d", resp.StatusCode)
	}
	switch {
	case m.Error != nil && m.Error.Code == -32001:
		return nil, "unknown task: " + m.Error.Message
	case m.Error != nil:
		return nil, fmt.Sprintf("json-rpc error %d: %s", m.Error.Code, m.Error.Message)
	case m.Result == nil:
		return nil, fmt.Sprintf("http %d", resp.StatusCode)
	}
	return m.Result, "ok"
}

// sendRound calls Payments.Refund, which asks for a confirmation
// (input_required), and answers it in a second request. A failure of the
// second request starts the call over (its requestState may be spent); a
// replica that cannot open the requestState is fatal.
func (l *loader) sendRound() (int64, string) {
	args := fmt.Sprintf(`{"order_id":"C-%d","amount_cents":%d}`, mrand.IntN(1_000_000), 1+mrand.IntN(9999))
	first := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"Payments_Refund","arguments":` + args + `,` + roundMeta + `}}`
	token, err := l.issuer.refundToken(first)
	if err != nil {
		return 0, err.Error()
	}
	res, class := l.mcp2026(first, "tools/call", "Payments_Refund", token)
	if class != "ok" {
		return 0, class
	}
	state, _ := res["requestState"].(string)
	if res["resultType"] != "input_required" || state == "" {
		return 0, fmt.Sprintf("bad answer: no question (%.120v)", res)
	}
	second := `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"Payments_Refund","arguments":` + args + `,` +
		`"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},"requestState":"` + state + `",` + roundMeta + `}}`
	if token, err = l.issuer.refundToken(second); err != nil {
		return 0, err.Error()
	}
	res, class = l.mcp2026(second, "tools/call", "Payments_Refund", token)
	if class != "ok" {
		if strings.HasPrefix(class, "json-rpc error -32602") && strings.Contains(class, "requestState") {
			return 0, "lost round: " + strings.TrimPrefix(class, "json-rpc error -32602: ")
		}
		return 0, class
	}
	sc, _ := res["structuredContent"].(map[string]any)
	if id, _ := sc["refund_id"].(string); !strings.HasPrefix(id, "rf_") {
		return 0, fmt.Sprintf("bad answer: no refund (%.160v)", res)
	}
	return 0, "ok"
}

// taskCallers is how many callers (token subjects) the tasks of the load
// are spread over: a caller holds at most 1,000 tasks.
const taskCallers = 32

// mcp2026 sends one MCP 2026-07-28 request for method (its Mcp-Name is
// name) through the balancer with a bearer token (the API key when it is
// empty); it returns the result, or why the request failed: an unknown
// task's error is "unknown task".
func (l *loader) mcp2026(body, method, name, token string) (map[string]any, string) {
	req, err := http.NewRequest(http.MethodPost, l.base+"/mcp", strings.NewReader(body))
	if err != nil {
		return nil, "bad request: " + err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	req.Header.Set("Mcp-Name", name)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	} else {
		req.Header.Set("OXP-API-Key", chaosAPIKey)
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return nil, "network"
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, "network"
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		raw = lastEvent(raw)
	}
	var m struct {
		Result map[string]any
		Error  *struct {
			Code    int
			Message string
		}
	}
	if json.Unmarshal(raw, &m) != nil {
		return nil, fmt.Sprintf("http %d", resp.StatusCode)
	}
	switch {
	case m.Error != nil && strings.Contains(m.Error.Message, "unknown task"):
		return nil, "unknown task: " + m.Error.Message
	case m.Error != nil:
		return nil, fmt.Sprintf("json-rpc error %d: %s", m.Error.Code, m.Error.Message)
	case m.Result == nil:
		return nil, fmt.Sprintf("http %d", resp.StatusCode)
	case m.Result["isError"] == true:
		return nil, "tool error"
	}
	return m.Result, "ok"
}
