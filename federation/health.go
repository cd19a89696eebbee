package federation

import (
	"encoding/json"
	"net/http"

	"github.com/otcgo/otc"
)

// ServeHTTP reports the upstreams' health as JSON, in its public form:
// what a load balancer, a health check or a client needs, without the
// upstreams' errors, whose text may name internal addresses:
//
//	{"status":"degraded","upstreams":[{"name":"calc","format":"otc","state":"up",
//	  "tools":3,"catalog_age_ms":1250}, {"name":"agent","state":"down",
//	  "tools":2,"catalog_age_ms":93000}]}
//
// An upstream still starting says for how long ("state":"starting",
// "starting_ms":35000). status is "ok" when every upstream is up,
// "degraded" otherwise. The
// answer is 200 either way, so that a load balancer does not take a
// replica out for an upstream that every replica shares; with the query
// ?strict it is 503 unless every upstream is up, for a check that should
// fail then. It answers GET and HEAD only. [Federation.HealthHandler]
// adds each upstream's last error, skipped tools and sessions for the
// requests an authenticator accepts.
func (f *Federation) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.serveHealth(w, r, false)
}

// HealthHandler serves the health as [Federation.ServeHTTP] does, and to
// a request authn accepts, each upstream's last error ("last_error"), the
// tools it left out ("skipped") and its open sessions ("sessions") too:
// give it the authenticator the tools are served behind. A request authn
// refuses gets the public form; nil authn serves the public form to all.
func (f *Federation) HealthHandler(authn otc.Authenticator) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		details := false
		if authn != nil {
			if id, err := authn.Authenticate(r); err == nil && id != nil {
				details = true
			}
		}
		f.serveHealth(w, r, details)
	})
}

// serveHealth answers a health request, with the upstreams' internals
// when details is true.
func (f *Federation) serveHealth(w http.ResponseWriter, r *http.Request, details bool) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "federation health: only GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	type row struct {
		Health
		CatalogAgeMS int64 `json:"catalog_age_ms,omitempty"`
		// StartingMS is how long a starting upstream has been starting.
		StartingMS int64 `json:"starting_ms,omitempty"`
	}
	body := struct {
		Status    string `json:"status"`
		Upstreams []row  `json:"upstreams"`
	}{Status: "ok", Upstreams: []row{}}
	for _, h := range f.Health() {
		if h.State != StateUp {
			body.Status = "degraded"
		}
		if !details {
			h.LastError, h.Skipped, h.Sessions = "", nil, 0
		}
		body.Upstreams = append(body.Upstreams, row{Health: h, CatalogAgeMS: h.CatalogAge.Milliseconds(), StartingMS: h.Starting.Milliseconds()})
	}
	status := http.StatusOK
	if _, strict := r.URL.Query()["strict"]; strict && body.Status != "ok" {
		status = http.StatusServiceUnavailable
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if r.Method == http.MethodGet {
		_ = json.NewEncoder(w).Encode(body)
	}
}
