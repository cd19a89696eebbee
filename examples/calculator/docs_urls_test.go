package main

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/federation"
)

// exampleURL finds a URL of the example server as the docs write it: on
// 127.0.0.1 or localhost at its default port, 8080. Other ports are other
// programs (an authorization server, a gateway, another agent).
var exampleURL = regexp.MustCompile(`https?://(?:127\.0\.0\.1|localhost):8080(?:/[A-Za-z0-9_./-]*)?`)

// formatFlag finds the format a documented command line names.
var formatFlag = regexp.MustCompile(`--(mcp|rest|a2a)\b`)

// TestDocumentedURLs starts the example as a newcomer does and checks
// every URL of it that README.md, docs/ and the gateway example write:
// each answers in the format its command line or path says, and lists
// the example's tools. The OTC handler answers under /otc, as mount.All
// and otc gateway lay a server out, and at the root, as it always has.
func TestDocumentedURLs(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	files := []string{filepath.Join(root, "README.md"), filepath.Join(root, "examples", "gateway", "gateway.yaml")}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	files = append(files, docs...)

	cmd, lines := startMain(t, "-addr 127.0.0.1:0")
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	base := listeningURL(t, nextLine(t, lines))

	type use struct {
		where  string
		format client.Format
	}
	uses := map[string][]use{} // by URL, as written
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for i, line := range strings.Split(string(b), "\n") {
			for _, at := range exampleURL.FindAllStringIndex(line, -1) {
				u := strings.TrimRight(line[at[0]:at[1]], ".")
				uses[u] = append(uses[u], use{where: filepath.Base(f) + ":" + strconv.Itoa(i+1), format: documentedFormat(line[:at[0]], u)})
			}
		}
	}
	require.NotEmpty(t, uses)
	for _, must := range []string{"http://127.0.0.1:8080/otc", "http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/v1"} {
		require.Contains(t, uses, must, "the README's quick start names it")
	}

	for written, us := range uses {
		for _, u := range us {
			t.Run(u.where, func(t *testing.T) {
				parsed, err := url.Parse(written)
				require.NoError(t, err)
				target := base + strings.TrimSuffix(parsed.Path, "/tools/call") // an endpoint below a base
				c, err := client.New(target, &client.Options{Format: u.format})
				require.NoError(t, err)
				t.Cleanup(func() { _ = c.Close() })
				defs, err := c.ListTools(t.Context())
				require.NoError(t, err, "%s (%s) as %s", written, u.where, u.format)
				assert.NotEmpty(t, defs)
			})
		}
	}
}

// documentedFormat is the format a URL is used in: the last format flag
// before it on its line (before, the text of the line up to it), else
// the one its path is mounted at.
func documentedFormat(before, u string) client.Format {
	if ms := formatFlag.FindAllStringSubmatch(before, -1); ms != nil {
		return client.Format(ms[len(ms)-1][1])
	}
	switch p, _ := url.Parse(u); {
	case p == nil:
		return client.FormatOTC
	case strings.HasPrefix(p.Path, "/mcp"):
		return client.FormatMCP
	case strings.HasPrefix(p.Path, "/v1"):
		return client.FormatREST
	case strings.HasPrefix(p.Path, "/a2a"):
		return client.FormatA2A
	}
	return client.FormatOTC
}

// TestGatewayExample: the gateway's example configuration loads, and
// reaches the example where it serves OTC.
func TestGatewayExample(t *testing.T) {
	cfg, err := federation.LoadConfig(filepath.Join("..", "gateway", "gateway.yaml"), func(string) string { return "" })
	require.NoError(t, err)
	ups := cfg.Upstreams
	require.NotEmpty(t, ups)
	assert.Equal(t, "calc", ups[0].Name)
	assert.Equal(t, "http://127.0.0.1:8080/otc", ups[0].URL)
	assert.Equal(t, client.FormatOTC, ups[0].Format)
}
