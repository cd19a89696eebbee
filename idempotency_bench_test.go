package otc_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
)

// BenchmarkIdempotency times an OTC call through the handler with a new
// call id each time, on a registry without an idempotency store (off)
// and with the in-memory store at its defaults (memory_store), so that
// the ratio is what recording each call costs. Past 100,000 calls the
// store evicts one outcome per call, as a busy server's does.
func BenchmarkIdempotency(b *testing.B) {
	add := func(_ context.Context, in benchAddInput) (float64, error) { return in.A + in.B, nil }
	tool := otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers together."}
	body := []byte(`{"request":{"call_id":"00000000-0000-0000-0000-000000000000","tool_id":"Calculator.Add","input":{"a":10,"b":5}}}`)
	idAt := bytes.Index(body, []byte("00000000-"))
	proto := httptest.NewRequest(http.MethodPost, "/tools/call", nil)
	proto.Header.Set("Content-Type", "application/json")
	proto.ContentLength = int64(len(body))

	for _, tc := range []struct {
		name  string
		store otc.IdempotencyStore
	}{{"off", nil}, {"memory_store", otc.NewMemoryStore(nil)}} {
		reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler), Idempotency: tc.store})
		require.NoError(b, otc.Register(reg, tool, add))
		h := otc.NewHandler(reg, nil)
		b.Run(tc.name, func(b *testing.B) {
			var n uint64
			rd := bytes.NewReader(body)
			b.ReportAllocs()
			for b.Loop() {
				// A new call id: the counter's bytes in hex over the
				// first 8 characters of the UUID.
				n++
				var c [4]byte
				binary.BigEndian.PutUint32(c[:], uint32(n))
				hex.Encode(body[idAt:idAt+8], c[:])
				rd.Reset(body)
				req := *proto
				req.Body = io.NopCloser(rd)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, &req)
				if rec.Code != http.StatusOK || rec.Header().Get(otc.HeaderReplayed) != "" {
					b.Fatalf("status %d, replayed %q: %.300s", rec.Code, rec.Header().Get(otc.HeaderReplayed), rec.Body.Bytes())
				}
			}
		})
	}
}
