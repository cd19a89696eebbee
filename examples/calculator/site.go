package main

import (
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"

	"github.com/otcgo/otc/a2a"
	"github.com/otcgo/otc/caller"
)

// site is what the environment says of where the server stands: the load
// balancers in front of it, and the URL its clients reach it at.
type site struct {
	// callers reads each request's client behind the trusted proxies
	// (OTC_TRUSTED_PROXIES).
	callers caller.Options
	// publicURL is the URL clients reach the server at (OTC_PUBLIC_URL),
	// "" when unset.
	publicURL string
	// push configures A2A's push notifications: the private networks
	// webhooks may be in (OTC_PUSH_ALLOWED_NETWORKS), and the key that
	// signs deliveries (OTC_PUSH_KEY_FILE).
	push a2a.PushOptions
}

// siteFromEnv reads OTC_TRUSTED_PROXIES, the load balancers whose
// X-Forwarded-For names a request's client (comma-separated addresses or
// CIDR prefixes), and OTC_PUBLIC_URL, the absolute URL clients reach the
// server at (such as https://tools.example.com), which the Agent Card
// names rather than the Host a request gave.
//
// It also reads A2A's push notification settings: OTC_PUSH_ALLOWED_NETWORKS,
// the private networks (comma-separated addresses or CIDR prefixes) that
// webhooks may be in although they are not public (none by default), and
// OTC_PUSH_KEY_FILE, a PEM file holding the private key (PKCS #8: ECDSA
// P-256 or P-384, Ed25519 or RSA) that signs each delivery with a JWT, its
// public key published at /a2a/.well-known/jwks.json (unsigned by
// default; give every replica the same key).
func siteFromEnv(getenv func(string) string) (site, error) {
	var s site
	var err error
	if s.callers.TrustedProxies, err = prefixesFromEnv(getenv, "OTC_TRUSTED_PROXIES"); err != nil {
		return site{}, err
	}
	if s.push.AllowedNetworks, err = prefixesFromEnv(getenv, "OTC_PUSH_ALLOWED_NETWORKS"); err != nil {
		return site{}, err
	}
	if path := strings.TrimSpace(getenv("OTC_PUSH_KEY_FILE")); path != "" {
		if s.push.SigningKey, err = readSigningKey(path); err != nil {
			return site{}, fmt.Errorf("OTC_PUSH_KEY_FILE: %w", err)
		}
	}
	if v := strings.TrimSpace(getenv("OTC_PUBLIC_URL")); v != "" {
		u, err := url.Parse(v)
		if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return site{}, fmt.Errorf("OTC_PUBLIC_URL: %q is not an absolute http or https URL such as https://tools.example.com", v)
		}
		s.publicURL = strings.TrimSuffix(v, "/")
	}
	if s.push.SigningKey != nil && s.publicURL == "" {
		return site{}, errors.New("OTC_PUSH_KEY_FILE needs OTC_PUBLIC_URL: a signed delivery names the server's public URL as its issuer, and no request may choose it (set OTC_PUBLIC_URL=https://tools.example.com, the URL clients reach the server at)")
	}
	return s, nil
}

// prefixesFromEnv reads environment variable name: comma-separated
// addresses or CIDR prefixes.
func prefixesFromEnv(getenv func(string) string, name string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for p := range strings.SplitSeq(getenv(name), ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		prefix, err := netip.ParsePrefix(p)
		if err != nil {
			a, aerr := netip.ParseAddr(p)
			if aerr != nil {
				return nil, fmt.Errorf("%s: %q is not an address or a prefix (such as 10.0.0.0/8)", name, p)
			}
			prefix = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, prefix.Masked())
	}
	return out, nil
}

// readSigningKey reads a PEM file's PKCS #8 private key.
func readSigningKey(path string) (crypto.Signer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, fmt.Errorf("%s holds no PEM block", path)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: not a PKCS #8 private key (openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 writes one): %w", path, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%s: a %T cannot sign", path, key)
	}
	return signer, nil
}

// serve returns h behind the site's trusted proxies.
func (s site) serve(h http.Handler) http.Handler { return caller.Handler(h, &s.callers) }

// a2aURL is the URL of the A2A endpoint at path below the public URL, or
// "" without one (the card then names the Host of each request).
func (s site) a2aURL(path string) string {
	if s.publicURL == "" {
		return ""
	}
	return s.publicURL + path
}
