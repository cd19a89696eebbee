package client

import (
	"context"
	"errors"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/backoff"
)

// RetryPolicy says how a [Client] retries a call that failed but may
// succeed if sent again: a refusal that says so (a tool error with
// can_retry true, a rate limit, a busy server), and, with Transport, a
// call that failed in transport where sending it again cannot run the
// tool twice. Each retry sends the same request, call id included, so a
// server can recognise a repeat. The zero value retries refusals twice
// (three attempts in all) with the defaults below.
type RetryPolicy struct {
	// MaxAttempts is the number of attempts, the first included. Zero
	// means 3; 1 means no retries.
	MaxAttempts int

	// MaxWait caps each wait, including a retry_after_ms the server asks
	// for, so a server cannot stall the caller for long. Zero means 30s.
	MaxWait time.Duration

	// Backoff is the first wait when the server gives no retry_after_ms;
	// it doubles at each further attempt, up to MaxWait. Zero means 200ms.
	Backoff time.Duration

	// Transport also retries a call that failed in transport (see
	// [Client.Unreached]), which may or may not have reached the tool,
	// when running it twice cannot happen or does no harm: the server
	// deduplicates calls by id ([Client.DeduplicatesCalls]), or the call
	// says it is idempotent ([CallOptions.Idempotent]). Other calls that
	// fail so are returned at once.
	Transport bool

	// TransportOnly retries failures in transport alone (as Transport
	// does), and returns every refusal at once for the caller to retry
	// when it chooses: what a gateway wants, whose own caller decides.
	TransportOnly bool
}

// Defaults of a zero RetryPolicy.
const (
	defaultMaxAttempts = 3
	defaultMaxWait     = 30 * time.Second
	defaultBackoff     = 200 * time.Millisecond
)

func (p *RetryPolicy) maxAttempts() int {
	if p.MaxAttempts <= 0 {
		return defaultMaxAttempts
	}
	return p.MaxAttempts
}

// wait is how long to wait after the attempt-th attempt failed with a
// retryable error that asked for retryAfter (zero when it did not).
func (p *RetryPolicy) wait(attempt int, retryAfter time.Duration) time.Duration {
	limit := p.MaxWait
	if limit <= 0 {
		limit = defaultMaxWait
	}
	if retryAfter > 0 {
		return min(retryAfter, limit)
	}
	first := p.Backoff
	if first <= 0 {
		first = defaultBackoff
	}
	return backoff.Delay(first, limit, attempt)
}

// again reports whether the call k, whose attempt failed with err, is
// sent again under the policy, and after what wait the server asked for
// (zero for none).
func (p *RetryPolicy) again(c *Client, k *call, err error) (time.Duration, bool) {
	if after, ok := retryAfterOf(err); ok {
		return after, !p.TransportOnly
	}
	if (p.Transport || p.TransportOnly) && (c.DeduplicatesCalls() || k.opts.Idempotent) && c.Unreached(err) {
		var busy *otc.Error
		if errors.As(err, &busy) {
			return busy.RetryAfter, true
		}
		return 0, true
	}
	return 0, false
}

// Unreached reports whether err, from one of the client's calls, means
// that the call failed in transport: no answer came (the connection was
// refused, cut or timed out), or the server failed as a server (a 5xx
// that is not the protocol's answer, an MCP or A2A server unavailable),
// so that the tool may or may not have run. A tool error, a refusal of
// the call or its caller, and a server pointing elsewhere
// ([*OriginError]) are answers, not failures in transport. A gateway
// counts these against the server; a [RetryPolicy] with Transport
// retries them where that is safe.
func (c *Client) Unreached(err error) bool {
	if err == nil {
		return false
	}
	var te *otc.ToolError
	var oe *otc.Error
	var rpc *RPCError
	var re *ResponseError
	var origin *OriginError
	switch {
	case errors.As(err, &te), errors.As(err, &rpc), errors.As(err, &origin):
		return false
	case errors.As(err, &oe):
		return oe.Code == otc.CodeUnavailable
	case errors.As(err, &re):
		return re.StatusCode >= 500 || re.StatusCode == 0
	}
	return true
}

// sleep waits for d, or returns the context's error as soon as it ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
