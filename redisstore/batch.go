package redisstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// The claims and outcomes of calls that run at the same time go to Redis
// together: each operation joins the pipeline about to be sent, and at
// most maxPipelines are in flight at once. A call alone is sent at once,
// as one round trip; under load, one round trip carries many calls'
// commands, and Redis reads and answers them with one system call each
// way instead of one per command, which is most of what a small command
// costs it.

const (
	// maxPipelines is how many pipelines of one store may be in flight at
	// once: enough to keep Redis busy while answers travel, few enough
	// that concurrent calls share them.
	maxPipelines = 4
	// maxBatch caps the commands of one pipeline.
	maxBatch = 256
)

// batchOp is one command waiting to be sent: add queues it on the
// pipeline and returns it; done is closed once its answer is in cmd.
type batchOp struct {
	ctx  context.Context
	add  func(ctx context.Context, p redis.Pipeliner) redis.Cmder
	cmd  redis.Cmder
	done chan struct{}
}

// batcher sends a store's commands in shared pipelines.
type batcher struct {
	client  redis.UniversalClient
	timeout time.Duration
	failed  func(error) // told of a pipeline that failed

	mu       sync.Mutex
	pending  []*batchOp
	inflight int
}

// do sends the command add queues, with the next pipeline, and returns it
// with its answer; or ctx's cause when ctx ends first (the command may
// still reach Redis, as a command whose answer is lost does). A command
// whose ctx has ended before its pipeline leaves is not sent.
func (b *batcher) do(ctx context.Context, add func(ctx context.Context, p redis.Pipeliner) redis.Cmder) (redis.Cmder, error) {
	op := &batchOp{ctx: ctx, add: add, done: make(chan struct{})}
	b.mu.Lock()
	b.pending = append(b.pending, op)
	if b.inflight < maxPipelines {
		b.inflight++
		batch := b.take()
		b.mu.Unlock()
		go b.send(batch)
	} else {
		b.mu.Unlock()
	}
	select {
	case <-op.done:
		if op.cmd == nil {
			break // not sent: ctx had ended
		}
		err := op.cmd.Err()
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			if ctx.Err() != nil {
				break // the caller's deadline, which says why
			}
			return nil, errTimeout // the pipeline's, which is OpTimeout too
		}
		return op.cmd, err
	case <-ctx.Done():
	}
	return nil, context.Cause(ctx)
}

// take removes the next batch from the pending commands. b.mu is held.
func (b *batcher) take() []*batchOp {
	n := min(len(b.pending), maxBatch)
	batch := make([]*batchOp, n)
	copy(batch, b.pending)
	rest := copy(b.pending, b.pending[n:])
	clear(b.pending[rest:])
	b.pending = b.pending[:rest]
	return batch
}

// send sends batch, and then the commands that queued meanwhile, until
// none are left.
func (b *batcher) send(batch []*batchOp) {
	for {
		b.exec(batch)
		b.mu.Lock()
		if len(b.pending) == 0 {
			b.inflight--
			b.mu.Unlock()
			return
		}
		batch = b.take()
		b.mu.Unlock()
	}
}

// exec sends one pipeline and hands each command its answer. The
// pipeline's deadline is the store's OpTimeout: a command's own deadline
// makes its caller return sooner, not the others.
func (b *batcher) exec(batch []*batchOp) {
	ctx, cancel := context.WithTimeoutCause(context.Background(), b.timeout, errTimeout)
	defer cancel()
	pipe := b.client.Pipeline()
	sent := batch[:0:0]
	for _, op := range batch {
		if op.ctx.Err() != nil {
			close(op.done) // its caller has returned; op.cmd stays nil
			continue
		}
		op.cmd = op.add(ctx, pipe)
		sent = append(sent, op)
	}
	if len(sent) > 0 {
		_, err := pipe.Exec(ctx) // each command carries its own error
		if err != nil && b.failed != nil {
			b.failed(err)
		}
	}
	for _, op := range sent {
		close(op.done)
	}
}
