package federation

import (
	"bytes"
	"context"
	"crypto"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/internal/nearest"
	"github.com/otcgo/otc/search"
)

// gatewayConfig is the gateway's configuration file.
type gatewayConfig struct {
	Name             string            `yaml:"name"`
	Version          string            `yaml:"version"`
	ReadablesAsTools bool              `yaml:"readables_as_tools"`
	Upstreams        []upstreamConfig  `yaml:"upstreams"`
	MCP              *gatewayMCPConfig `yaml:"mcp"`
}

// gatewayMCPConfig is how the gateway serves MCP.
type gatewayMCPConfig struct {
	SearchThreshold *threshold `yaml:"search_threshold"`
	PinnedTools     []string   `yaml:"pinned_tools"`
}

// threshold is a number of tools, or "off".
type threshold struct {
	off bool
	n   int
}

func (t *threshold) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.Value == "off" {
		*t = threshold{off: true}
		return nil
	}
	v, err := strconv.Atoi(n.Value)
	if err != nil || n.Kind != yaml.ScalarNode || v < 0 {
		return fmt.Errorf("line %d: %q is not a number of tools (0 or more) or off", n.Line, n.Value)
	}
	*t = threshold{n: v}
	return nil
}

// DefaultSearchThreshold is how many tools a caller of otc gateway's MCP
// endpoint may see before its tools/list answers in search mode, when
// the configuration does not say.
const DefaultSearchThreshold = 50

// Config is a gateway's configuration file, read by [LoadConfig].
type Config struct {
	// Upstreams are the servers federated.
	Upstreams []Upstream
	// MCPSearch is how the gateway's MCP endpoint lists a large catalog
	// (mcp.SearchMode): the file's mcp.search_threshold (Threshold,
	// DefaultSearchThreshold unless the file says; off: nil) and
	// mcp.pinned_tools (Pinned).
	MCPSearch *search.Mode
	// Name and Version are what the gateway calls itself to its clients
	// (MCP's serverInfo, A2A's card): the file's name and version; empty
	// for the server's defaults.
	Name, Version string
	// ReadablesAsTools, the file's readables_as_tools, serves the
	// upstreams' resources, prompts and skills as tools too
	// (resource.RegisterTools, prompt.RegisterTools, skill.RegisterTools),
	// for the agents whose format has tools only.
	ReadablesAsTools bool
}

type upstreamConfig struct {
	Name         string                   `yaml:"name"`
	URL          string                   `yaml:"url"`
	MCP          *endpointConfig          `yaml:"mcp"`
	A2A          *endpointConfig          `yaml:"a2a"`
	OTC          *endpointConfig          `yaml:"otc"`
	REST         *endpointConfig          `yaml:"rest"`
	Include      []string                 `yaml:"include"`
	Exclude      []string                 `yaml:"exclude"`
	Rename       map[string]string        `yaml:"rename"`
	Credentials  *credentialsConfig       `yaml:"credentials"`
	Timeouts     timeoutsConfig           `yaml:"timeouts"`
	Breaker      breakerConfig            `yaml:"breaker"`
	Sessions     int                      `yaml:"sessions"`
	MaxTools     int                      `yaml:"max_tools"`
	MaxResources int                      `yaml:"max_resources"`
	URIPrefixes  []string                 `yaml:"uri_prefixes"`
	LogLevel     string                   `yaml:"log_level"`
	Policy       *policyConfig            `yaml:"policy"`
	Policies     map[string]*policyConfig `yaml:"policies"`
}

type endpointConfig struct {
	URL     string            `yaml:"url"`
	Command []string          `yaml:"command"`
	Dir     string            `yaml:"dir"`
	Env     map[string]string `yaml:"env"`
	// InheritEnv starts the process with the gateway's whole environment,
	// not the minimal one (Upstream.InheritEnv).
	InheritEnv bool `yaml:"inherit_env"`
	// Version pins an MCP upstream's protocol version.
	Version string `yaml:"version"`
	// Transport is "sse" for an MCP upstream of the HTTP+SSE transport
	// of 2024-11-05 (client.Options.MCPTransport).
	Transport string `yaml:"transport"`
}

// credentialsConfig names secrets by the environment variable or the file
// that holds them, never by value.
type credentialsConfig struct {
	BearerTokenEnv  string `yaml:"bearer_token_env"`
	BearerTokenFile string `yaml:"bearer_token_file"`
	APIKeyEnv       string `yaml:"api_key_env"`
	APIKeyFile      string `yaml:"api_key_file"`
	PassThrough     *struct {
		Audience string `yaml:"audience"`
	} `yaml:"pass_through"`
	TokenExchange *struct {
		TokenURL         string   `yaml:"token_url"`
		ClientID         string   `yaml:"client_id"`
		ClientSecretEnv  string   `yaml:"client_secret_env"`
		ClientSecretFile string   `yaml:"client_secret_file"`
		Audience         string   `yaml:"audience"`
		Resource         string   `yaml:"resource"`
		Scopes           []string `yaml:"scopes"`
	} `yaml:"token_exchange"`
	ClientCredentials *struct {
		Issuer           string `yaml:"issuer"`
		ClientID         string `yaml:"client_id"`
		ClientSecretEnv  string `yaml:"client_secret_env"`
		ClientSecretFile string `yaml:"client_secret_file"`
		// PrivateKeyFile authenticates with a JWT signed by the PEM key
		// in it (private_key_jwt) instead of a secret; KeyID is its kid.
		PrivateKeyFile string   `yaml:"private_key_file"`
		KeyID          string   `yaml:"key_id"`
		Scopes         []string `yaml:"scopes"`
		DPoP           bool     `yaml:"dpop"`
	} `yaml:"client_credentials"`
	// JWTBearer is workload identity federation: the platform's token
	// for the gateway's workload, read from its file at each grant, is
	// the JWT bearer grant (RFC 7523).
	JWTBearer *struct {
		Issuer        string   `yaml:"issuer"`
		ClientID      string   `yaml:"client_id"`
		AssertionFile string   `yaml:"assertion_file"`
		Scopes        []string `yaml:"scopes"`
		DPoP          bool     `yaml:"dpop"`
	} `yaml:"jwt_bearer"`
}

type timeoutsConfig struct {
	Start   duration `yaml:"start"`
	Ready   duration `yaml:"ready"`
	Session duration `yaml:"session_idle"`
	Call    duration `yaml:"call"`
	Idle    duration `yaml:"idle"`
	Refresh duration `yaml:"refresh"`
}

type breakerConfig struct {
	Failures int      `yaml:"failures"`
	Cooldown duration `yaml:"cooldown"`
}

type policyConfig struct {
	Protocols            []string `yaml:"protocols"`
	ResourceURI          string   `yaml:"resource_uri"`
	RequiredCapabilities []string `yaml:"required_capabilities"`
	RequiredScopes       []string `yaml:"required_scopes"`
	MaxBlastRadius       string   `yaml:"max_blast_radius"`
	RequiresExecution    bool     `yaml:"requires_execution"`
	AllowedOperations    []string `yaml:"allowed_operations"`
	AllowedTargets       []string `yaml:"allowed_targets"`
	RequiresBoundToken   bool     `yaml:"requires_bound_token"`
}

func (p *policyConfig) policy() *otc.Policy {
	if p == nil {
		return nil
	}
	return &otc.Policy{Protocols: p.Protocols, ResourceURI: p.ResourceURI, RequiredCapabilities: p.RequiredCapabilities,
		RequiredScopes: p.RequiredScopes, MaxBlastRadius: p.MaxBlastRadius, RequiresExecution: p.RequiresExecution,
		AllowedOperations: p.AllowedOperations, AllowedTargets: p.AllowedTargets, RequiresBoundToken: p.RequiresBoundToken}
}

// duration is a time.Duration written as Go writes one ("1.5s", "2m").
type duration time.Duration

func (d *duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: %q is not a duration such as 500ms, 10s or 2m", n.Line, n.Value)
	}
	*d = duration(v)
	return nil
}

// LoadConfig reads a gateway's configuration file, as otc gateway does:
// YAML, of which JSON is a part, with a list "upstreams" (see
// docs/federation.md for its keys) and the settings of the gateway's own
// endpoints. Secrets are named by the environment variable (read with
// getenv) or the file that holds them, never written in it. Every error
// names the file, the line and the field; the upstreams returned pass
// [Check].
func LoadConfig(path string, getenv func(string) string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, yamlError(path, b, nil, err)
	}
	var cfg gatewayConfig
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		return nil, yamlError(path, b, &root, err)
	}
	items := upstreamNodes(&root)
	if len(cfg.Upstreams) == 0 {
		return nil, &ConfigError{File: path, Line: 1, Index: -1, Field: "upstreams", Message: "the file names no upstream"}
	}
	ups := make([]Upstream, 0, len(cfg.Upstreams))
	var errs []error
	names := map[string]int{} // the line each name was first given at
	for i, uc := range cfg.Upstreams {
		up, err := func() (up Upstream, _ error) {
			item := items[i]
			at := func(field string) int { return lineOf(item, strings.Split(field, ".")...) }
			fail := func(field, msg string) error {
				return &ConfigError{File: path, Line: at(field), Index: i, Name: uc.Name, Field: field, Message: msg}
			}
			up = Upstream{Name: uc.Name, URL: uc.URL, Include: uc.Include, Exclude: uc.Exclude, Rename: uc.Rename,
				Timeouts: Timeouts{Start: time.Duration(uc.Timeouts.Start), Ready: time.Duration(uc.Timeouts.Ready), Call: time.Duration(uc.Timeouts.Call),
					Idle: time.Duration(uc.Timeouts.Idle), Refresh: time.Duration(uc.Timeouts.Refresh)},
				SessionIdle: time.Duration(uc.Timeouts.Session),
				Breaker:     Breaker{Failures: uc.Breaker.Failures, Cooldown: time.Duration(uc.Breaker.Cooldown)},
				Sessions:    uc.Sessions, MaxTools: uc.MaxTools, MaxResources: uc.MaxResources, URIPrefixes: uc.URIPrefixes, LogLevel: uc.LogLevel, Policy: uc.Policy.policy()}
			if len(uc.Policies) > 0 {
				up.Policies = map[string]*otc.Policy{}
				for k, p := range uc.Policies {
					up.Policies[k] = p.policy()
				}
			}
			n := 0
			for _, e := range []struct {
				field string
				ep    *endpointConfig
			}{{"mcp", uc.MCP}, {"a2a", uc.A2A}, {"otc", uc.OTC}, {"rest", uc.REST}} {
				field, ep := e.field, e.ep
				if ep == nil {
					continue
				}
				n++
				if n > 1 {
					return up, fail(field, "an upstream speaks one format: set one of mcp, a2a, otc and rest")
				}
				if uc.URL != "" {
					return up, fail("url", "set the url inside "+field+", or leave "+field+" out and let the format be found")
				}
				up.Format, up.URL, up.Dir = client.Format(field), ep.URL, ep.Dir
				switch {
				case ep.Version != "" && field != "mcp":
					return up, fail(field+".version", "only an MCP upstream's protocol version can be pinned")
				case ep.Transport != "" && field != "mcp":
					return up, fail(field+".transport", "only an MCP upstream has a choice of transport")
				case ep.Transport != "" && len(ep.Command) > 0:
					return up, fail("mcp.transport", "a server run as a process speaks over its standard input and output: leave transport out")
				}
				if ep.Version != "" || ep.Transport != "" {
					// The client's own rules, named by the file's keys.
					o := &client.Options{MCPVersion: ep.Version, MCPTransport: ep.Transport}
					if err := o.CheckMCP(); err != nil {
						key, problem := "mcp.version", err.Error()
						if oe, ok := errors.AsType[*client.OptionError](err); ok {
							problem = oe.Problem
							if oe.Option == "MCPTransport" {
								key = "mcp.transport"
							}
						}
						return up, fail(key, problem)
					}
					up.Client = o
				}
				if len(ep.Command) > 0 {
					if field != "mcp" {
						return up, fail(field+".command", "only an MCP server runs as a process")
					}
					up.Command = ep.Command
					up.InheritEnv = ep.InheritEnv
					up.Env = nil
					keys := make([]string, 0, len(ep.Env))
					for k := range ep.Env {
						keys = append(keys, k)
					}
					sort.Strings(keys)
					for _, k := range keys {
						up.Env = append(up.Env, k+"="+ep.Env[k])
					}
				}
			}
			if uc.Credentials != nil {
				c, field, err := uc.Credentials.resolve(getenv)
				if err != nil {
					return up, fail("credentials."+field, err.Error())
				}
				up.Credentials = c
			}
			// The federation's own checks, named at the field's line.
			if err := Check(up); err != nil {
				var ce *ConfigError
				if errors.As(err, &ce) {
					field := ce.Field
					if field == "url" || field == "command" || field == "format" {
						for _, f := range []string{"mcp", "a2a", "otc", "rest"} {
							if hasKey(item, f) {
								field = f
							}
						}
					}
					return up, fail(field, ce.Message)
				}
				return up, err
			}
			return up, nil
		}()
		if err != nil {
			errs = append(errs, err) // every upstream's mistake, not only the first
			continue
		}
		line := lineOf(items[i], "name")
		if first, taken := names[up.Name]; taken {
			errs = append(errs, &ConfigError{File: path, Line: line, Index: i, Name: up.Name, Field: "name",
				Message: fmt.Sprintf("the name is taken by the upstream at line %d", first)})
			continue
		}
		names[up.Name] = line
		ups = append(ups, up)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	c := &Config{Upstreams: ups, MCPSearch: &search.Mode{Threshold: DefaultSearchThreshold}, Name: cfg.Name, Version: cfg.Version, ReadablesAsTools: cfg.ReadablesAsTools}
	if m := cfg.MCP; m != nil {
		if t := m.SearchThreshold; t != nil {
			c.MCPSearch.Threshold = t.n
			if t.off {
				c.MCPSearch = nil
			}
		}
		if c.MCPSearch != nil {
			c.MCPSearch.Pinned = m.PinnedTools
		}
	}
	return c, nil
}

var (
	yamlLine     = regexp.MustCompile(`^line (\d+): `)
	unknownField = regexp.MustCompile(`^field (\S+) not found in type federation\.(\w+)$`)
	wrongType    = regexp.MustCompile("^cannot unmarshal !!(\\w+) `(.*)` into (\\S+)$")
)

// sections are the configuration's parts, by the Go type that decodes
// them: what a person calls each, and the keys it takes.
var sections = map[string]struct {
	name string
	keys []string
}{
	"gatewayConfig":     {"the file", yamlKeys(gatewayConfig{})},
	"gatewayMCPConfig":  {"the gateway's mcp", yamlKeys(gatewayMCPConfig{})},
	"upstreamConfig":    {"an upstream", yamlKeys(upstreamConfig{})},
	"endpointConfig":    {"mcp, a2a, otc and rest", yamlKeys(endpointConfig{})},
	"credentialsConfig": {"credentials", yamlKeys(credentialsConfig{})},
	"timeoutsConfig":    {"timeouts", yamlKeys(timeoutsConfig{})},
	"breakerConfig":     {"breaker", yamlKeys(breakerConfig{})},
	"policyConfig":      {"a policy", yamlKeys(policyConfig{})},
}

// yamlKeys lists the keys a configuration struct takes.
func yamlKeys(v any) []string {
	t := reflect.TypeOf(v)
	var keys []string
	for i := range t.NumField() {
		if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k != "" && k != "-" {
			keys = append(keys, k)
		}
	}
	return keys
}

// yamlError writes the YAML parser's errors as FILE:LINE: message, one
// per line, in the words of the file (its keys and values), not of the Go
// types that read it; b is the file, for the lines the parser misplaces.
func yamlError(path string, b []byte, root *yaml.Node, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n")
	var lines []string
	for _, l := range strings.Split(msg, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		line := ""
		if m := yamlLine.FindStringSubmatch(l); m != nil {
			line, l = m[1], l[len(m[0]):]
		}
		if strings.Contains(l, "found a tab character") {
			// The parser names the line before the tab's, at times.
			if n := tabLine(b); n > 0 {
				line = strconv.Itoa(n)
			}
			l = "a tab in the indentation: indent with spaces"
		}
		if m := unknownField.FindStringSubmatch(l); m != nil {
			sec := sections[m[2]]
			l = fmt.Sprintf("%s is not a key of %s", m[1], sec.name)
			if near := closest(m[1], sec.keys); near != "" {
				l += fmt.Sprintf(" (did you mean %s?)", near)
			}
			if len(sec.keys) > 0 {
				l += "; it takes " + strings.Join(sec.keys, ", ")
			}
		}
		if m := wrongType.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(line)
			l = fmt.Sprintf("%q is not %s", m[2], expected(m[3]))
			if key := keyAt(root, n, m[2]); key != "" {
				l = key + ": " + l
			}
		}
		if line != "" {
			l = path + ":" + line + ": " + l
		} else {
			l = path + ": " + l
		}
		lines = append(lines, l)
	}
	return errors.New(strings.Join(lines, "\n"))
}

// expected says what a Go type the parser wanted is, in a file's terms.
func expected(goType string) string {
	switch {
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return "a whole number"
	case goType == "bool":
		return "true or false"
	case goType == "string":
		return "text"
	case strings.HasPrefix(goType, "[]"):
		return "a list ([a, b] or one item a line after -)"
	case strings.HasPrefix(goType, "map["), strings.HasPrefix(goType, "federation."):
		return "a mapping of keys to values ({key: value} or key: value lines)"
	}
	return "of the kind this key takes"
}

// tabLine is the first line (from 1) whose indentation holds a tab; 0 for
// none.
func tabLine(b []byte) int {
	for i, l := range strings.Split(string(b), "\n") {
		if indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]; strings.Contains(indent, "\t") {
			return i + 1
		}
	}
	return 0
}

// keyAt is the key whose value, value, is on line n; "" for none.
func keyAt(n *yaml.Node, line int, value string) string {
	if n == nil {
		return ""
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if v := n.Content[i+1]; v.Line == line && v.Kind == yaml.ScalarNode && v.Value == value {
				return n.Content[i].Value
			}
		}
	}
	for _, c := range n.Content {
		if k := keyAt(c, line, value); k != "" {
			return k
		}
	}
	return ""
}

// closest is the key of keys nearest to s, when one is near enough to
// be what was meant; "" otherwise.
func closest(s string, keys []string) string {
	near := nearest.Names(s, 1, slices.Values(keys))
	if len(near) == 0 {
		return ""
	}
	return near[0]
}

// resolve reads the secrets the credentials name; field names the one
// that failed.
func (c *credentialsConfig) resolve(getenv func(string) string) (Credentials, string, error) {
	var out Credentials
	secret := func(envName, file string) (string, string, error) {
		switch {
		case envName != "" && file != "":
			return "", "", errors.New("name the environment variable or the file, not both")
		case envName != "":
			v := getenv(envName)
			if v == "" {
				return "", "", fmt.Errorf("the environment variable %s is empty or not set", envName)
			}
			return v, "", nil
		case file != "":
			b, err := os.ReadFile(file)
			if err != nil {
				return "", "", err
			}
			v := strings.TrimSpace(string(b))
			if v == "" {
				return "", "", fmt.Errorf("the file %s is empty", file)
			}
			return v, "", nil
		}
		return "", "", nil
	}
	var err error
	if out.BearerToken, _, err = secret(c.BearerTokenEnv, c.BearerTokenFile); err != nil {
		return out, "bearer_token_env", err
	}
	if out.APIKey, _, err = secret(c.APIKeyEnv, c.APIKeyFile); err != nil {
		return out, "api_key_env", err
	}
	if c.PassThrough != nil {
		out.PassThrough, out.Audience = true, c.PassThrough.Audience
	}
	if te := c.TokenExchange; te != nil {
		s, _, err := secret(te.ClientSecretEnv, te.ClientSecretFile)
		if err != nil {
			return out, "token_exchange", err
		}
		out.TokenExchange = &client.TokenExchange{TokenURL: te.TokenURL, ClientID: te.ClientID, ClientSecret: s,
			Audience: te.Audience, Resource: te.Resource, Scopes: te.Scopes}
	}
	if cc := c.ClientCredentials; cc != nil {
		s, _, err := secret(cc.ClientSecretEnv, cc.ClientSecretFile)
		if err != nil {
			return out, "client_credentials", err
		}
		var key crypto.Signer
		switch {
		case cc.PrivateKeyFile != "" && s != "":
			return out, "client_credentials", errors.New("name a client secret or a private_key_file, not both")
		case cc.PrivateKeyFile != "":
			if key, err = client.ReadPrivateKey(cc.PrivateKeyFile); err != nil {
				return out, "client_credentials.private_key_file", err
			}
		}
		if cc.ClientID == "" || s == "" && key == nil {
			return out, "client_credentials", errors.New("client_id and a client secret (client_secret_env or client_secret_file) or a private_key_file are required")
		}
		if cc.Issuer == "" {
			return out, "client_credentials.issuer", errors.New("the authorization server the client is registered with is required: the secret is sent to it alone, never to one an upstream names")
		}
		out.OAuth = &client.OAuth{Issuer: cc.Issuer, ClientID: cc.ClientID, ClientSecret: s, ClientKey: key, ClientKeyID: cc.KeyID,
			Scopes: cc.Scopes, DPoP: cc.DPoP}
	}
	if jb := c.JWTBearer; jb != nil {
		switch {
		case c.ClientCredentials != nil:
			return out, "jwt_bearer", errors.New("name client_credentials or jwt_bearer, not both")
		case jb.AssertionFile == "":
			return out, "jwt_bearer.assertion_file", errors.New("the file the platform keeps the workload's token in is required")
		case jb.Issuer == "":
			return out, "jwt_bearer.issuer", errors.New("the authorization server that takes the workload's token is required: the token is sent to it alone")
		}
		if _, err := client.TokenFile(jb.AssertionFile)(context.Background()); err != nil {
			return out, "jwt_bearer.assertion_file", err
		}
		out.OAuth = &client.OAuth{Issuer: jb.Issuer, ClientID: jb.ClientID, Assertion: client.TokenFile(jb.AssertionFile),
			Scopes: jb.Scopes, DPoP: jb.DPoP}
	}
	return out, "", nil
}

// upstreamNodes returns the mapping node of each item of "upstreams".
func upstreamNodes(root *yaml.Node) []*yaml.Node {
	doc := root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		doc = doc.Content[0]
	}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if doc.Content[i].Value == "upstreams" {
			return doc.Content[i+1].Content
		}
	}
	return nil
}

// hasKey says whether the mapping n has key.
func hasKey(n *yaml.Node, key string) bool {
	for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

// lineOf is the line of the key path below n, or of the deepest part of
// it that exists.
func lineOf(n *yaml.Node, path ...string) int {
	line := n.Line
	for _, key := range path {
		found := false
		for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				line, n, found = n.Content[i].Line, n.Content[i+1], true
				break
			}
		}
		if !found {
			break
		}
	}
	return line
}
