package docs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"regexp"
	"strings"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/tasks"
)

// A tool that runs only as a task, called over MCP 2026-07-28 by a
// client that declares the tasks extension, then polled until it ends.
func Example_tasks() {
	reg := otc.NewRegistry(nil)
	// docs:start tasks
	type reportInput struct {
		Month string `json:"month" jsonschema:"description=The month to report on (YYYY-MM)."`
	}
	err := otc.Register(reg, otc.Tool{
		ID: "Reports.Build", Version: "1.0.0", Description: "Builds the monthly sales report.",
		Tasks:   otc.TasksRequired, // a client polls for the result
		Timeout: 30 * time.Minute,  // still bounds the call
	}, func(ctx context.Context, in reportInput) (string, error) {
		// ... minutes of work, which stop when ctx is cancelled ...
		return "Sales report for " + in.Month + ": 1,204 orders.", nil
	})
	if err != nil {
		panic(err)
	}
	h := mcp.NewHandler(reg, &mcp.Options{Tasks: &tasks.Options{
		Store:      tasks.NewMemoryStore(nil), // or redisstore.NewTaskStore, shared by the replicas
		MaxRunning: 100,
	}})
	// docs:end tasks

	// The answer to the call, then each poll's, with the task id and the
	// times elided.
	post := func(method, name string, params string) map[string]any {
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
			`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
		req := httptest.NewRequest("POST", "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":{`+params+`,`+meta+`}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		req.Header.Set("Mcp-Name", name)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var resp struct{ Result map[string]any }
		_ = json.Unmarshal(rec.Body.Bytes(), &resp)
		return resp.Result
	}
	elide := regexp.MustCompile(`"(taskId|createdAt|lastUpdatedAt)":"[^"]*"`)
	show := func(res map[string]any) {
		b, _ := json.Marshal(res)
		fmt.Println(elide.ReplaceAllString(string(b), `"$1":…`))
	}
	created := post("tools/call", "Reports_Build", `"name":"Reports_Build","arguments":{"month":"2026-10"}`)
	show(created)
	id := created["taskId"].(string)
	for {
		res := post("tasks/get", id, `"taskId":"`+id+`"`)
		if res["status"] != "working" {
			show(res)
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Output:
	// {"createdAt":…,"lastUpdatedAt":…,"pollIntervalMs":1000,"resultType":"task","status":"working","taskId":…,"ttlMs":3600000}
	// {"createdAt":…,"lastUpdatedAt":…,"pollIntervalMs":1000,"result":{"content":[{"text":"Sales report for 2026-10: 1,204 orders.","type":"text"}],"structuredContent":{"result":"Sales report for 2026-10: 1,204 orders."}},"resultType":"complete","status":"completed","taskId":…,"ttlMs":3600000}
}
