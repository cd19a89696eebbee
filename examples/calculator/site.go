package main

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

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
}

// siteFromEnv reads OTC_TRUSTED_PROXIES, the load balancers whose
// X-Forwarded-For names a request's client (comma-separated addresses or
// CIDR prefixes), and OTC_PUBLIC_URL, the absolute URL clients reach the
// server at (such as https://tools.example.com), which the Agent Card
// names rather than the Host a request gave.
func siteFromEnv(getenv func(string) string) (site, error) {
	var s site
	for p := range strings.SplitSeq(getenv("OTC_TRUSTED_PROXIES"), ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		prefix, err := netip.ParsePrefix(p)
		if err != nil {
			a, aerr := netip.ParseAddr(p)
			if aerr != nil {
				return site{}, fmt.Errorf("OTC_TRUSTED_PROXIES: %q is not an address or a prefix (such as 10.0.0.0/8)", p)
			}
			prefix = netip.PrefixFrom(a, a.BitLen())
		}
		s.callers.TrustedProxies = append(s.callers.TrustedProxies, prefix)
	}
	if v := strings.TrimSpace(getenv("OTC_PUBLIC_URL")); v != "" {
		u, err := url.Parse(v)
		if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return site{}, fmt.Errorf("OTC_PUBLIC_URL: %q is not an absolute http or https URL such as https://tools.example.com", v)
		}
		s.publicURL = strings.TrimSuffix(v, "/")
	}
	return s, nil
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
