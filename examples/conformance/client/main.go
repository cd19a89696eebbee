// Command client is the MCP client that the official conformance suite's
// client scenarios run (.ci/mcp-conformance.sh):
//
//	conformance client --command "go run ./examples/conformance/client" --scenario tools_call
//
// The suite starts a server of its own for each scenario, runs this
// command with the server's URL as its last argument and the scenario's
// name in MCP_CONFORMANCE_SCENARIO (and the protocol version, when the
// run names one, in MCP_CONFORMANCE_PROTOCOL_VERSION), and checks what
// the client sent. Each scenario is what an application would do with the
// client package: list the tools, call one, answer a question.
package main

import (
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "conformance client:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) < 2 {
		return errors.New("want the server's URL")
	}
	serverURL := os.Args[len(os.Args)-1]
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	opts := &client.Options{Format: client.FormatMCP, MCPVersion: os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION")}
	switch scenario {
	case "elicitation-sep1034-client-defaults", "sep-2322-client-request-state":
		// Accept what is asked, with nothing filled in: the client fills
		// in the form's defaults.
		opts.Handlers = &client.Handlers{Elicit: func(context.Context, *client.ElicitRequest) (*client.ElicitResult, error) {
			return &client.ElicitResult{Action: "accept", Content: map[string]any{"confirmed": true}}, nil
		}}
	}
	if strings.HasPrefix(scenario, "auth/") {
		o, err := oauthFor(ctx, scenario, serverURL)
		if err != nil {
			return err
		}
		opts.OAuth = o
	}
	c, err := client.New(serverURL, opts)
	if err != nil {
		return err
	}
	defer c.Close()
	if strings.HasPrefix(scenario, "sep-2640-client-") {
		return skills(ctx, c.MCP(), scenario)
	}
	defs, err := c.ListTools(ctx)
	if err != nil {
		return err
	}
	call := func(name string, input any) error {
		_, err := c.Call(ctx, name, input, nil)
		return err
	}
	// A scenario may name the calls to make, in MCP_CONFORMANCE_CONTEXT.
	var given struct {
		ToolCalls []struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"toolCalls"`
	}
	_ = json.Unmarshal([]byte(os.Getenv("MCP_CONFORMANCE_CONTEXT")), &given)
	if len(given.ToolCalls) > 0 {
		for _, tc := range given.ToolCalls {
			if err := call(tc.Name, tc.Arguments); err != nil {
				return fmt.Errorf("%s: %w", tc.Name, err)
			}
		}
		return nil
	}
	switch scenario {
	case "json-schema-ref-no-deref", "request-metadata":
		return nil // listing is the scenario
	case "json-schema-2020-12-preservation":
		for _, d := range defs {
			if d.Name == "json_schema_2020_12_tool" {
				return call("json_schema_echo", map[string]any{"schema": d.InputSchema.Parameters})
			}
		}
		return errors.New("the server lists no json_schema_2020_12_tool")
	case "elicitation-sep1034-client-defaults":
		return call("test_client_elicitation_defaults", nil)
	case "sep-2322-client-request-state":
		for _, name := range []string{"test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state", "test_mrtr_no_result_type"} {
			if err := call(name, nil); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		return nil
	}
	// initialize, tools_call, the header scenarios and the auth/*
	// scenarios: call every tool with the arguments the suite's tools
	// take. A tool error is the tool's answer, not the client's failure.
	for _, d := range defs {
		err := call(d.ID, map[string]any{"a": 2, "b": 3})
		if _, isToolError := errors.AsType[*otc.ToolError](err); err != nil && !isToolError {
			return fmt.Errorf("%s: %w", d.Name, err)
		}
	}
	return nil
}

// oauthFor is the OAuth client of an auth/ scenario: a native client
// whose browser step follows the authorization server's redirect without
// a user (the suite's server approves at once), identified by its
// metadata document's URL where the server supports it, or registered,
// or pre-registered with the credentials the scenario gives in
// MCP_CONFORMANCE_CONTEXT. The extensions' scenarios give what a workload
// or an enterprise's client is configured with: a private key, a
// workload's token, the user's ID token at the enterprise's IdP; and the
// DPoP scenarios bind the tokens to a key of the client's.
func oauthFor(ctx context.Context, scenario, serverURL string) (*client.OAuth, error) {
	var given struct {
		ClientID         string `json:"client_id"`
		ClientSecret     string `json:"client_secret"`
		Issuer           string `json:"issuer"`
		PrivateKeyPEM    string `json:"private_key_pem"`
		WorkloadJWT      string `json:"valid_jwt"`
		IdPClientID      string `json:"idp_client_id"`
		IdPIDToken       string `json:"idp_id_token"`
		IdPTokenEndpoint string `json:"idp_token_endpoint"`
	}
	_ = json.Unmarshal([]byte(os.Getenv("MCP_CONFORMANCE_CONTEXT")), &given)
	credentials := given.ClientSecret != "" || given.PrivateKeyPEM != "" || given.WorkloadJWT != ""
	if credentials && given.Issuer == "" {
		// Credentials go to the authorization server they were made
		// for alone. The suite names it in some scenarios; in the
		// others, the server's metadata is read here, as the person
		// configuring the client would, once.
		given.Issuer = issuerOf(ctx, serverURL)
	}
	o := &client.OAuth{
		Issuer:            given.Issuer,
		ClientID:          given.ClientID,
		ClientSecret:      given.ClientSecret,
		ClientMetadataURL: "https://conformance-test.local/client-metadata.json",
		ClientName:        "otc-conformance-client",
		RedirectURL:       "http://localhost:3000/callback",
		DPoP:              strings.HasPrefix(scenario, "auth/dpop"),
	}
	switch {
	case given.PrivateKeyPEM != "":
		key, err := writeAndRead(given.PrivateKeyPEM)
		if err != nil {
			return nil, err
		}
		o.ClientKey = key
		return o, nil
	case given.WorkloadJWT != "":
		o.Assertion = func(context.Context) (string, error) { return given.WorkloadJWT, nil }
		return o, nil
	case given.IdPIDToken != "":
		o.Enterprise = &client.Enterprise{
			TokenURL: given.IdPTokenEndpoint,
			ClientID: given.IdPClientID,
			IDToken:  func(context.Context) (string, error) { return given.IdPIDToken, nil },
		}
		return o, nil
	case strings.HasPrefix(scenario, "auth/client-credentials"):
		return o, nil
	}
	o.Authorize = func(ctx context.Context, authURL string) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
		if err != nil {
			return "", err
		}
		noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := noFollow.Do(req)
		if err != nil {
			return "", err
		}
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		if loc == "" {
			return "", fmt.Errorf("the authorization endpoint answered %d without a redirect", resp.StatusCode)
		}
		return loc, nil
	}
	return o, nil
}

// writeAndRead reads a PEM private key as a deployment does, from a file
// (client.ReadPrivateKey): the scenario's key, written to one first.
func writeAndRead(pemKey string) (crypto.Signer, error) {
	f, err := os.CreateTemp("", "conformance-key-*.pem")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(pemKey); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return client.ReadPrivateKey(f.Name())
}

// issuerOf is the first authorization server that the protected-resource
// metadata of the server at serverURL names (RFC 9728, at the path-based
// location, then at the root), or "" when there is none.
func issuerOf(ctx context.Context, serverURL string) string {
	u, err := url.Parse(serverURL)
	if err != nil {
		return ""
	}
	base := u.Scheme + "://" + u.Host
	for _, at := range []string{base + "/.well-known/oauth-protected-resource" + strings.TrimSuffix(u.Path, "/"), base + "/.well-known/oauth-protected-resource"} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, at, nil)
		if err != nil {
			return ""
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			continue
		}
		var prm struct {
			AuthorizationServers []string `json:"authorization_servers"`
		}
		err = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&prm)
		resp.Body.Close()
		if err == nil && resp.StatusCode == http.StatusOK && len(prm.AuthorizationServers) > 0 {
			return prm.AuthorizationServers[0]
		}
	}
	return ""
}

// skills is what a host does with the skills extension's scenarios: it
// lists the skills, and reads nothing more (sep-2640-client-no-prefetch);
// or it loads the first skill, reading its SKILL.md verified against the
// entry, and then the skill's other files, stopping at the first that
// fails verification (the verify scenarios serve a SKILL.md that does).
func skills(ctx context.Context, s *client.Session, scenario string) error {
	list, err := s.ListSkills(ctx)
	if err != nil {
		return err
	}
	if scenario == "sep-2640-client-no-prefetch" || len(list) == 0 {
		return nil
	}
	sk := &list[0]
	if _, err := s.ReadSkillFile(ctx, sk, sk.URI); err != nil {
		return err
	}
	for _, f := range sk.Files {
		if f.URI == sk.URI {
			continue
		}
		if _, err := s.ReadSkillFile(ctx, sk, f.URI); err != nil {
			return err
		}
	}
	return nil
}
