package otc_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/idempotency"
	"github.com/otcgo/otc/internal/testkit"
)

// idemBench serves OTC calls of Calculator.Add, each with a new call id,
// through a handler whose registry has the given idempotency store.
type idemBench struct {
	h     http.Handler
	body  []byte
	idAt  int
	n     uint32
	rd    *bytes.Reader
	proto *http.Request
}

func newIdemBench(b *testing.B, store otc.IdempotencyStore) *idemBench {
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler), Idempotency: store})
	require.NoError(b, otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers together."}, testkit.Add))
	body := []byte(`{"request":{"call_id":"00000000-0000-0000-0000-000000000000","tool_id":"Calculator.Add","input":{"a":10,"b":5}}}`)
	proto := httptest.NewRequest(http.MethodPost, "/tools/call", nil)
	proto.Header.Set("Content-Type", "application/json")
	proto.ContentLength = int64(len(body))
	return &idemBench{h: otc.NewHandler(reg, nil), body: body, idAt: bytes.Index(body, []byte("00000000-")), rd: bytes.NewReader(nil), proto: proto}
}

// call serves one call with a new call id: the counter's bytes in hex
// over the first 8 characters of the UUID.
func (ib *idemBench) call(b *testing.B) {
	ib.n++
	var c [4]byte
	binary.BigEndian.PutUint32(c[:], ib.n)
	hex.Encode(ib.body[ib.idAt:ib.idAt+8], c[:])
	ib.rd.Reset(ib.body)
	req := *ib.proto
	req.Body = io.NopCloser(ib.rd)
	rec := httptest.NewRecorder()
	ib.h.ServeHTTP(rec, &req)
	if rec.Code != http.StatusOK || rec.Header().Get(otc.HeaderReplayed) != "" {
		b.Fatalf("status %d, replayed %q: %.300s", rec.Code, rec.Header().Get(otc.HeaderReplayed), rec.Body.Bytes())
	}
}

// BenchmarkIdempotency times an OTC call through the handler with a new
// call id each time, on a registry without an idempotency store (off)
// and with the in-memory store at its defaults (memory_store), so that
// the ratio is what recording each call costs. Past 100,000 calls the
// store evicts one outcome per call, as a busy server's does.
//
// interleaved runs the two in alternating blocks of 256 calls and
// reports the ratio of their times (memory/off), which drifts in the
// machine's speed during a run do not skew.
func BenchmarkIdempotency(b *testing.B) {
	b.Run("off", func(b *testing.B) {
		ib := newIdemBench(b, nil)
		b.ReportAllocs()
		for b.Loop() {
			ib.call(b)
		}
	})
	b.Run("memory_store", func(b *testing.B) {
		ib := newIdemBench(b, idempotency.NewMemoryStore(nil))
		b.ReportAllocs()
		for b.Loop() {
			ib.call(b)
		}
	})
	b.Run("interleaved", func(b *testing.B) {
		off, mem := newIdemBench(b, nil), newIdemBench(b, idempotency.NewMemoryStore(nil))
		const block = 256
		var tOff, tMem time.Duration
		for i := 0; b.Loop(); i++ {
			if i%block != 0 {
				continue
			}
			start := time.Now()
			for range block {
				off.call(b)
			}
			mid := time.Now()
			for range block {
				mem.call(b)
			}
			tOff, tMem = tOff+mid.Sub(start), tMem+time.Since(mid)
		}
		if tOff > 0 {
			b.ReportMetric(float64(tMem)/float64(tOff), "memory/off")
		}
	})
}
