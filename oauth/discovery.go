package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/otcgo/otc/internal/wire"
)

// This file finds an authorization server's metadata (RFC 8414, and
// OpenID Connect Discovery where a server offers only that): where its
// keys are, and its introspection endpoint. It runs as the first step of
// each scheduled fetch of the server's key set (internal/jwks), so that
// its schedule, wait and backoff are the key set's.

// maxMetadataBytes caps a metadata document, which is a few kilobytes.
const maxMetadataBytes = 256 << 10

// asMetadata is what this package reads of an authorization server's
// metadata.
type asMetadata struct {
	Issuer                string `json:"issuer"`
	JWKSURI               string `json:"jwks_uri"`
	IntrospectionEndpoint string `json:"introspection_endpoint"`
}

// discovery finds one authorization server's metadata.
type discovery struct {
	issuer      string
	candidates  []string // the well-known URLs, in the order they are tried
	client      *http.Client
	logger      *slog.Logger
	needKeys    bool   // the key set is wanted: configured at jwksURL, or the document's jwks_uri
	needIntro   bool   // the document must name introspection_endpoint
	introspects bool   // the server has introspection, so it may publish no keys
	jwksURL     string // the key set's configured URL, if any

	doc atomic.Pointer[asMetadata] // the last good document; nil until one
}

func newDiscovery(issuer string, client *http.Client, logger *slog.Logger, needKeys, needIntro, introspects bool) *discovery {
	return &discovery{
		issuer: issuer, candidates: wellKnownURLs(issuer), client: client, logger: logger,
		needKeys: needKeys, needIntro: needIntro, introspects: introspects,
	}
}

// wellKnownURLs returns the URLs at which the metadata of issuer may be,
// in the order the MCP authorization spec lists them: RFC 8414's
// /.well-known/oauth-authorization-server inserted between the host and
// the path, OpenID Connect's /.well-known/openid-configuration inserted
// likewise, and, for an issuer with a path, appended to the path as
// OpenID Connect Discovery 1.0 has it.
func wellKnownURLs(issuer string) []string {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil
	}
	origin := u.Scheme + "://" + u.Host
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	if path == "" {
		return []string{
			origin + "/.well-known/oauth-authorization-server",
			origin + "/.well-known/openid-configuration",
		}
	}
	return []string{
		origin + "/.well-known/oauth-authorization-server" + path,
		origin + "/.well-known/openid-configuration" + path,
		origin + path + "/.well-known/openid-configuration",
	}
}

// resolve is the key set's [jwks.Resolver]: it reads the metadata when it
// has none or rediscover is set, and returns where the keys are. A failed
// rediscovery keeps the last good document, logged; a failed first one
// fails the fetch, which is then retried with backoff.
func (d *discovery) resolve(ctx context.Context, rediscover bool) (string, string, error) {
	doc := d.doc.Load()
	if doc == nil || rediscover {
		found, err := d.discover(ctx)
		switch {
		case err == nil:
			d.doc.Store(found)
			doc = found
		case doc == nil:
			return "", "", err
		case ctx.Err() == nil:
			d.logger.WarnContext(ctx, "otc/oauth: reading the authorization server's metadata again failed; what it said before stays in use",
				"issuer", d.issuer, "error", err.Error())
		}
	}
	jwksURL := d.jwksURL
	if jwksURL == "" && d.needKeys {
		jwksURL = doc.JWKSURI
	}
	if jwksURL == "" {
		return "", "", nil // no keys: the server's tokens are introspected
	}
	return jwksURL, redact(jwksURL), nil
}

// discover tries each well-known URL in turn and returns the first
// acceptable document; the error names what each answered.
func (d *discovery) discover(ctx context.Context) (*asMetadata, error) {
	var problems []string
	for _, u := range d.candidates {
		doc, err := d.fetch(ctx, u)
		if err == nil {
			return doc, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		problems = append(problems, fmt.Sprintf("%s: %v", redact(u), err))
	}
	return nil, fmt.Errorf("no usable metadata for issuer %q (%s)", wire.Truncate(d.issuer, 200), strings.Join(problems, "; "))
}

// fetch reads and checks the document at u.
func (d *discovery) fetch(ctx context.Context, u string) (*asMetadata, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP status %d", resp.StatusCode)
	}
	body, err := wire.ReadAnswer(resp.Body, maxMetadataBytes, "the document")
	if err != nil {
		return nil, err
	}
	var doc asMetadata
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("not a metadata document (a JSON object with string members): %w", err)
	}
	// RFC 8414 §3.3: the issuer of the document must be the one whose
	// URL was built, or a server could speak for another.
	if doc.Issuer != d.issuer {
		return nil, fmt.Errorf("its issuer %q is not %q (RFC 8414 §3.3): the document is not used", wire.Truncate(doc.Issuer, 200), wire.Truncate(d.issuer, 200))
	}
	if d.needKeys && d.jwksURL == "" && doc.JWKSURI == "" && !d.introspects {
		return nil, errors.New("it names no jwks_uri: set the server's JWKSURL or JWKS, or configure Introspection")
	}
	if doc.JWKSURI != "" {
		if err := checkFetchURL(doc.JWKSURI); err != nil {
			return nil, fmt.Errorf("its jwks_uri %w", err)
		}
	}
	if d.needIntro {
		if doc.IntrospectionEndpoint == "" {
			return nil, errors.New("it names no introspection_endpoint: set Introspection.Endpoint")
		}
		if err := checkFetchURL(doc.IntrospectionEndpoint); err != nil {
			return nil, fmt.Errorf("its introspection_endpoint %w", err)
		}
	}
	return &doc, nil
}
