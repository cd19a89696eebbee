package testkit

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
)

// RealTool is a tool of the catalog of real servers, as otc gateway's MCP
// endpoint lists it (search/testdata/wild-catalog.json.gz, written by
// make wild with --catalog; gzipped, so that the root module's zip does
// not carry 1.9 MB of it).
type RealTool struct {
	Name        string               `json:"name"`
	Title       string               `json:"title,omitempty"`
	Description string               `json:"description"`
	InputSchema json.RawMessage      `json:"inputSchema"`
	Annotations *otc.ToolAnnotations `json:"annotations,omitempty"`
	Meta        map[string]any       `json:"_meta,omitempty"`
}

// upstreamMeta is the _meta key of a federated tool's server.
const upstreamMeta = "io.github.otcgo.federation/upstream"

// RealCatalog reads the catalog of real servers' tools, found beside this
// package's source, so that any package's tests read the same file.
func RealCatalog(tb testing.TB) []RealTool {
	tb.Helper()
	_, here, _, ok := runtime.Caller(0)
	require.True(tb, ok)
	f, err := os.Open(filepath.Join(filepath.Dir(here), "..", "..", "search", "testdata", "wild-catalog.json.gz"))
	require.NoError(tb, err)
	defer f.Close()
	z, err := gzip.NewReader(f)
	require.NoError(tb, err)
	var tools []RealTool
	require.NoError(tb, json.NewDecoder(z).Decode(&tools))
	return tools
}

// RealRegistry registers tools as the gateway did: each under the name of
// the server it came from, copies times (the copies after the first under
// server names of their own, "s1_github", so that ten copies make a
// catalog of ten thousand real tools). Their functions return nothing.
func RealRegistry(tb testing.TB, tools []RealTool, copies int) *otc.Registry {
	tb.Helper()
	reg := otc.NewRegistry(nil)
	for c := range copies {
		for _, w := range tools {
			up, _ := w.Meta[upstreamMeta].(string)
			require.NotEmpty(tb, up, "%s names its server", w.Name)
			local := strings.TrimPrefix(w.Name, up+"_")
			if c > 0 {
				up = fmt.Sprintf("s%d_%s", c, up)
			}
			err := otc.Register(reg, otc.Tool{ID: up + "." + local, Version: "1.0.0", Title: w.Title, Description: w.Description,
				InputSchema: w.InputSchema, Annotations: w.Annotations, Meta: map[string]any{upstreamMeta: up}},
				func(context.Context, map[string]any) (map[string]any, error) { return nil, nil })
			require.NoError(tb, err, w.Name)
		}
	}
	return reg
}
