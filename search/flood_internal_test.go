package search

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBudgets: a caller's burst, then its rate; each caller its own
// budget; the callers kept are bounded, refilled budgets forgotten first.
func TestBudgets(t *testing.T) {
	t.Parallel()
	bs := &budgets{byCaller: map[string]*budget{}}
	now := time.Unix(1_000_000, 0)
	for i := range CallerBurst {
		require.Zero(t, bs.take("a", now), "search %d of the burst", i+1)
	}
	wait := bs.take("a", now)
	assert.InDelta(t, float64(time.Second/CallerRate), float64(wait), float64(time.Millisecond), "one search's time at the rate")
	assert.Zero(t, bs.take("b", now), "another caller's budget is its own")
	now = now.Add(time.Second / CallerRate)
	assert.Zero(t, bs.take("a", now), "refilled at the rate")
	assert.NotZero(t, bs.take("a", now))

	for i := range maxCallers + 10 {
		bs.take(fmt.Sprintf("c%d", i), now)
	}
	assert.LessOrEqual(t, len(bs.byCaller), maxCallers)
	assert.Contains(t, bs.byCaller, fmt.Sprintf("c%d", maxCallers+9), "the newest is kept")

	// Once refilled, budgets are forgotten before one in use.
	later := now.Add(time.Hour)
	bs.byCaller["busy"] = &budget{tokens: 0, at: later}
	bs.take("new", later)
	assert.Contains(t, bs.byCaller, "busy")
	assert.Len(t, bs.byCaller, 2, "every refilled budget forgotten")
}
