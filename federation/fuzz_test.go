package federation

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
)

// FuzzCatalog applies a hostile upstream's catalog (a tool's name, its
// input and output schemas, as an MCP server would list them) twice, the
// second time changed: it never panics, and whatever is registered is
// under the upstream's toolkit, with an input schema the registry took.
func FuzzCatalog(f *testing.F) {
	f.Add("echo", `{"type":"object","properties":{"text":{"type":"string"}}}`, ``)
	f.Add("get-sum", `{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{"title":"A"}}}`, `{"type":"object"}`)
	f.Add("x/y.z", `{"type":"object","properties":{"n":{"$ref":"#"}}}`, `null`)
	f.Add("", `[]`, `{`)
	f.Add("ünïcode", `{"type":"object","$id":"urn:x","properties":{"p":true}}`, `{"type":"string"}`)
	f.Fuzz(func(t *testing.T, name, in, out string) {
		fed := &Federation{reg: otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)}), logger: slog.New(slog.DiscardHandler)}
		cfg := Upstream{Name: "up", URL: "http://127.0.0.1:1", Format: client.FormatMCP}
		if err := check(&cfg); err != nil {
			t.Fatal(err)
		}
		u := newUpstream(fed, cfg, 1)
		cl, err := client.New(cfg.URL, &client.Options{Format: client.FormatMCP})
		if err != nil {
			t.Fatal(err)
		}
		defs := []otc.ToolDefinition{
			{ID: name, Name: name, Description: "A tool.", InputSchema: otc.InputSchema{Parameters: json.RawMessage(in)}, OutputSchema: json.RawMessage(out)},
			{ID: "other", Name: "other", Description: "Another.", InputSchema: otc.InputSchema{Parameters: json.RawMessage(in)}},
		}
		for round := range 2 {
			if round == 1 {
				defs[0].Description = "Changed."
				defs = defs[:1]
			}
			_ = u.apply(cl, defs)
			for _, d := range fed.reg.Tools() {
				if !strings.HasPrefix(d.ID, "up.") {
					t.Fatalf("registered outside the upstream's toolkit: %s", d.ID)
				}
				if !json.Valid(d.InputSchema.Parameters) {
					t.Fatalf("%s: an invalid input schema: %s", d.ID, d.InputSchema.Parameters)
				}
			}
			if s := u.snap.Load(); s != nil && len(s.byID) != len(fed.reg.Tools()) {
				t.Fatalf("the snapshot holds %d tools, the registry %d", len(s.byID), len(fed.reg.Tools()))
			}
		}
	})
}
