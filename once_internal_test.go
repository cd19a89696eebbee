package otc

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTokenLedger: an id is spent until its time, then fresh again; a
// full ledger refuses rather than forgets an unexpired id, and makes room
// as ids expire.
func TestTokenLedger(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	l := &tokenLedger{max: 3, now: func() time.Time { return now }}
	spend := func(key string, until time.Duration) (bool, error) {
		return l.spend(context.Background(), key, "", now.Add(until))
	}

	fresh, err := spend("a", time.Minute)
	require.NoError(t, err)
	assert.True(t, fresh)
	fresh, err = spend("a", time.Hour)
	require.NoError(t, err)
	assert.False(t, fresh, "spent")

	for i, until := range []time.Duration{2 * time.Minute, 3 * time.Minute} {
		fresh, err = spend(fmt.Sprint("k", i), until)
		require.NoError(t, err)
		assert.True(t, fresh)
	}
	_, err = spend("d", time.Minute)
	assert.ErrorIs(t, err, errLedgerFull, "three unexpired ids: none is dropped for a fourth")
	fresh, err = spend("a", time.Minute)
	require.NoError(t, err)
	assert.False(t, fresh, "still spent when full")

	now = now.Add(time.Minute) // "a" expires
	fresh, err = spend("d", time.Minute)
	require.NoError(t, err)
	assert.True(t, fresh, "room made by the expired id")
	now = now.Add(10 * time.Second)
	_, err = spend("e", time.Minute)
	assert.ErrorIs(t, err, errLedgerFull)

	now = now.Add(3 * time.Minute) // all expired
	fresh, err = spend("a", time.Minute)
	require.NoError(t, err)
	assert.True(t, fresh, "an id is fresh again once its token has expired")
	assert.Len(t, l.until, 1)
	assert.Len(t, l.order, 1)

	// A time in the past still keeps the id a moment: spent is spent.
	fresh, err = spend("past", -time.Hour)
	require.NoError(t, err)
	assert.True(t, fresh)
	fresh, err = spend("past", -time.Hour)
	require.NoError(t, err)
	assert.False(t, fresh)
}
