package docs_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/federation"
	"github.com/otcgo/otc/mount"
)

// A gateway: a registry of its own tools and of a remote server's, served
// over every format.
func Example_federation() {
	// The remote server: any OTC, MCP, REST or A2A server. Here, one
	// built with this library, serving Calculator.Add.
	upstreamMux := http.NewServeMux()
	mount.All(upstreamMux, calculator(nil), nil)
	upstream := httptest.NewServer(upstreamMux)
	defer upstream.Close()
	ctx := context.Background()

	// docs:start mount
	reg := otc.NewRegistry(nil)
	// ... otc.Register(reg, ...) the service's own tools ...

	fed, err := federation.Mount(ctx, reg, []federation.Upstream{{
		Name:     "calc", // its tools are served as calc.*
		URL:      upstream.URL + "/otc",
		Format:   client.FormatOTC, // empty: found, as client.Dial does
		Exclude:  []string{"Admin.*"},
		Timeouts: federation.Timeouts{Call: 30 * time.Second},
	}}, nil)
	if err != nil {
		log.Fatal(err) // a configuration error, or a name collision
	}
	defer fed.Close()

	mux := http.NewServeMux()
	mount.All(mux, reg, nil)              // every format, as for local tools
	mux.Handle("/federation/health", fed) // each upstream's state
	// docs:end mount
	gw := httptest.NewServer(mux)
	defer gw.Close()

	// docs:start call
	for _, d := range reg.Tools() {
		fmt.Println(d.ID, d.Name)
	}
	c, err := client.New(gw.URL+"/mcp", &client.Options{Format: client.FormatMCP})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	res, err := c.Call(ctx, "calc_Calculator_Add", map[string]int{"a": 2, "b": 3}, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(res.Value))
	// docs:end call

	// Output:
	// calc.Calculator_Add@1.0.0 calc_Calculator_Add
	// 5
}

// The upstreams one may federate, one of each kind.
func Example_federationUpstreams() {
	// docs:start upstreams
	ups := []federation.Upstream{
		// An MCP server run as a process, one per caller identity.
		{Name: "everything", Command: []string{"npx", "@modelcontextprotocol/server-everything"}},
		// An MCP server over Streamable HTTP, with the gateway's own token.
		{Name: "github", URL: "https://mcp.example.com/mcp", Format: client.FormatMCP,
			Credentials: federation.Credentials{BearerToken: "…"}},
		// An A2A agent: each skill is a tool.
		{Name: "agent", URL: "http://127.0.0.1:9000", Format: client.FormatA2A},
		// An OTC server, whose own policy the caller's token must pass:
		// the caller's token goes along, when it was issued for it.
		{Name: "payments", URL: "https://pay.example.com/otc",
			Credentials: federation.Credentials{PassThrough: true, Audience: "https://pay.example.com"},
			Policy:      &otc.Policy{RequiredScopes: []string{"payments"}}},
	}
	// docs:end upstreams
	for _, u := range ups {
		fmt.Println(federation.Check(u) == nil)
	}
	// Output:
	// true
	// true
	// true
	// true
}
