package idempotency

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/otcgo/otc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMemoryStoreSemantics(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	s := NewMemoryStore(&MemoryStoreOptions{TTL: time.Minute, MaxEntries: 3})
	s.now = func() time.Time { return now }

	rec, claim, err := s.Claim(ctx, "k", "fp")
	require.NoError(t, err)
	require.Nil(t, rec)
	require.NotNil(t, claim)

	// In flight: others see the record, not a claim.
	rec, other, err := s.Claim(ctx, "k", "fp2")
	require.NoError(t, err)
	assert.Nil(t, other)
	assert.Equal(t, &otc.IdempotencyRecord{Fingerprint: "fp"}, rec)

	// Waiters wake when the outcome is recorded.
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() { assert.NoError(t, s.Wait(ctx, "k")) })
	}
	time.Sleep(10 * time.Millisecond)
	require.NoError(t, claim.Complete(ctx, []byte("out")))
	wg.Wait()
	assert.ErrorIs(t, claim.Complete(ctx, []byte("again")), otc.ErrClaimLost)
	assert.ErrorIs(t, claim.Release(ctx), otc.ErrClaimLost)
	rec, _, err = s.Claim(ctx, "k", "fp")
	require.NoError(t, err)
	assert.Equal(t, &otc.IdempotencyRecord{Fingerprint: "fp", Done: true, Outcome: []byte("out")}, rec)

	// Release lets the next claim run, and wakes waiters.
	_, c2, err := s.Claim(ctx, "r", "fp")
	require.NoError(t, err)
	waited := make(chan error)
	go func() { waited <- s.Wait(ctx, "r") }()
	time.Sleep(10 * time.Millisecond)
	require.NoError(t, c2.Release(ctx))
	require.NoError(t, <-waited)
	_, c3, err := s.Claim(ctx, "r", "fp")
	require.NoError(t, err)
	require.NotNil(t, c3)

	// Wait ends with its context.
	wctx, cancel := context.WithCancelCause(ctx)
	cause := errors.New("gave up")
	cancel(cause)
	assert.ErrorIs(t, s.Wait(wctx, "r"), cause)
	assert.NoError(t, s.Wait(ctx, "absent"))

	// Entries: "k" is recorded; "r" and a third are in flight. A fourth
	// key evicts the recorded one; a fifth finds only calls in flight.
	_, c4, err := s.Claim(ctx, "x", "fp")
	require.NoError(t, err)
	assert.Equal(t, 3, s.Len())
	_, c5, err := s.Claim(ctx, "y", "fp")
	require.NoError(t, err)
	require.NotNil(t, c5)
	_, _, err = s.Claim(ctx, "z", "fp")
	assert.ErrorIs(t, err, otc.ErrStoreFull)
	for _, c := range []otc.IdempotencyClaim{c3, c4, c5} {
		require.NoError(t, c.Release(ctx))
	}
	rec, c6, err := s.Claim(ctx, "k", "fp")
	require.NoError(t, err)
	assert.Nil(t, rec, "k was evicted, oldest first")
	require.NoError(t, c6.Release(ctx))

	// TTL: kept until the minute is up, then gone.
	s2 := NewMemoryStore(&MemoryStoreOptions{TTL: time.Minute})
	s2.now = func() time.Time { return now }
	_, c, err := s2.Claim(ctx, "t", "fp")
	require.NoError(t, err)
	require.NoError(t, c.Complete(ctx, []byte("o")))
	now = now.Add(59 * time.Second)
	rec, _, _ = s2.Claim(ctx, "t", "fp")
	require.NotNil(t, rec)
	now = now.Add(time.Second)
	rec, c, _ = s2.Claim(ctx, "t", "fp")
	assert.Nil(t, rec)
	assert.NotNil(t, c)
	assert.Equal(t, 1, s2.Len())

	// An outcome over the limit is not kept, and the key is free.
	s3 := NewMemoryStore(&MemoryStoreOptions{MaxOutcomeBytes: 4})
	_, c, _ = s3.Claim(ctx, "big", "fp")
	assert.ErrorIs(t, c.Complete(ctx, []byte("12345")), otc.ErrOutcomeTooLarge)
	assert.Equal(t, 0, s3.Len())
}
