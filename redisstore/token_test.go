package redisstore_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/redisstore"
)

// Execution-bound capability tokens spent in a shared Redis: replicas
// sharing the store share the record of spent token ids, and an outage
// refuses the call rather than let a replay through.

// newRefundReplica serves Pay.Refund, which requires an execution-bound
// token, from a registry of its own on store; ran counts its runs. Its
// authenticator, testkit.ClaimsAuth, reads a token's claims from a test
// header (every call here sends one): the registry's single-use rule is
// what is tested here, not signatures (the root package tests those).
func newRefundReplica(t *testing.T, store otc.IdempotencyStore, ran *atomic.Int64) string {
	t.Helper()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler), Idempotency: store})
	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Pay.Refund", Version: "1.0.0", Description: "Refunds an order.",
		Policy: &otc.Policy{ResourceURI: "urn:test:pay", RequiresExecution: true},
	}, func(context.Context, countInput) (int64, error) { return ran.Add(1), nil }))
	srv := httptest.NewServer(otc.NewHandler(reg, &otc.HandlerOptions{Authenticator: testkit.ClaimsAuth()}))
	t.Cleanup(srv.Close)
	return srv.URL
}

const refundBody = `{"request":{"tool_id":"Pay.Refund","input":{}}}`

// sendToken calls Pay.Refund with a token of issuer iss and id jti bound
// to the call.
func sendToken(t *testing.T, base, iss, jti string) (int, map[string]any) {
	t.Helper()
	claims, err := json.Marshal(map[string]any{
		"iss": iss, "jti": jti, "aud": "urn:test:pay",
		"exp":      time.Now().Add(5 * time.Minute).Unix(),
		"inp_hash": testkit.InpHash(refundBody),
	})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, base+"/tools/call", strings.NewReader(refundBody))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(testkit.ClaimsHeader, string(claims))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var body map[string]any
	require.NoError(t, json.Unmarshal(raw, &body), string(raw))
	return resp.StatusCode, body
}

// TestTokenSpentOnEveryReplica: a token spent on one replica is spent on
// the other; the record is kept for the store's TTL.
func TestTokenSpentOnEveryReplica(t *testing.T) {
	client := needRedis(t)
	prefix := freshPrefix(t, client)
	var ran atomic.Int64
	a := newRefundReplica(t, redisstore.NewIdempotencyStore(client, &redisstore.IdempotencyOptions{Prefix: prefix}), &ran)
	b := newRefundReplica(t, redisstore.NewIdempotencyStore(client, &redisstore.IdempotencyOptions{Prefix: prefix}), &ran)

	status, body := sendToken(t, a, "https://issuer.test", "jti-1")
	require.Equal(t, http.StatusOK, status, "%v", body)
	status, body = sendToken(t, b, "https://issuer.test", "jti-1")
	assert.Equal(t, http.StatusUnauthorized, status, "%v", body)
	assert.Equal(t, otc.ReasonTokenReplayed, body["reason"])
	status, body = sendToken(t, a, "https://issuer.test", "jti-1")
	assert.Equal(t, http.StatusUnauthorized, status, "%v", body)

	status, body = sendToken(t, b, "https://other-issuer.test", "jti-1")
	assert.Equal(t, http.StatusOK, status, "another issuer's jti-1 is another token: %v", body)
	assert.Equal(t, int64(2), ran.Load())

	keys, err := client.Keys(context.Background(), prefix+"*").Result()
	require.NoError(t, err)
	require.Len(t, keys, 2, "one record per spent token")
	for _, k := range keys {
		ttl, err := client.PTTL(context.Background(), k).Result()
		require.NoError(t, err)
		assert.InDelta(t, otc.DefaultIdempotencyTTL.Hours(), ttl.Hours(), 0.01, "kept for the store's TTL")
	}
}

// TestTokenWithRedisDown: when the shared record cannot be reached, an
// execution-bound call does not run, and may be retried with the same
// token once it is back.
func TestTokenWithRedisDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	client := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialerRetries: 1, DialerRetryTimeout: time.Millisecond})
	t.Cleanup(func() { client.Close() })
	var ran atomic.Int64
	base := newRefundReplica(t, redisstore.NewIdempotencyStore(client, &redisstore.IdempotencyOptions{Logger: slog.New(slog.DiscardHandler)}), &ran)

	status, body := sendToken(t, base, "https://issuer.test", "jti-down")
	require.Equal(t, http.StatusOK, status, "%v", body)
	res := body["result"].(map[string]any)
	assert.Equal(t, false, res["success"], "%v", body)
	te := res["error"].(map[string]any)
	assert.Equal(t, true, te["can_retry"], "%v", te)
	assert.Contains(t, te["message"], "try again shortly with the same token")
	assert.Zero(t, ran.Load(), "no call runs unless its token is known to be spent")
}
