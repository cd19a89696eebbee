package federation

import (
	"encoding/json"
	"net/http"
)

// ServeHTTP reports the upstreams' health as JSON, for operators and
// health checks:
//
//	{"status":"degraded","upstreams":[{"name":"calc","format":"otc","state":"up",
//	  "tools":3,"catalog_age_ms":1250}, {"name":"agent","state":"down",
//	  "tools":2,"catalog_age_ms":93000,"last_error":"reading its catalog: …"}]}
//
// status is "ok" when every upstream is up, "degraded" otherwise. The
// answer is 200 either way, so that a load balancer does not take a
// replica out for an upstream that every replica shares; with the query
// ?strict it is 503 unless every upstream is up, for a check that should
// fail then. It answers GET and HEAD only.
func (f *Federation) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "federation health: only GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	type row struct {
		Health
		CatalogAgeMS int64 `json:"catalog_age_ms,omitempty"`
	}
	body := struct {
		Status    string `json:"status"`
		Upstreams []row  `json:"upstreams"`
	}{Status: "ok", Upstreams: []row{}}
	for _, h := range f.Health() {
		if h.State != StateUp {
			body.Status = "degraded"
		}
		body.Upstreams = append(body.Upstreams, row{Health: h, CatalogAgeMS: h.CatalogAge.Milliseconds()})
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
