package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/resource"
)

// The calculator's memory register: Memory.Store keeps a number, which
// the resource calc://memory holds, so that a client subscribed to it
// (over MCP: resources/subscribe, or subscriptions/listen in 2026-07-28)
// is told of each change. With OTC_REDIS_URL the number is kept in Redis,
// and the replicas share it, and, through the MCP sessions' store, the
// updates: a subscriber is told whichever replica stored the number.

// MemoryInput is the input of Memory.Store.
type MemoryInput struct {
	Value float64 `json:"value" jsonschema:"description=The number to keep in the calculator's memory."`
}

// MemoryContents are the contents of calc://memory.
type MemoryContents struct {
	Value *float64 `json:"value" jsonschema:"description=The number Memory.Store kept last, or null before any."`
}

// register keeps the memory's number.
type register interface {
	// load returns the number, and false before any was stored.
	load(ctx context.Context) (float64, bool, error)
	store(ctx context.Context, v float64) error
}

// localRegister is a register of this process.
type localRegister struct {
	mu  sync.Mutex
	v   float64
	set bool
}

func (r *localRegister) load(context.Context) (float64, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.v, r.set, nil
}

func (r *localRegister) store(_ context.Context, v float64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.v, r.set = v, true
	return nil
}

// redisRegister is a register in Redis, which the replicas share.
type redisRegister struct {
	client redis.UniversalClient
	key    string
}

func (r redisRegister) load(ctx context.Context) (float64, bool, error) {
	s, err := r.client.Get(ctx, r.key).Result()
	if errors.Is(err, redis.Nil) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("reading the memory from Redis: %w", err)
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil, err
}

func (r redisRegister) store(ctx context.Context, v float64) error {
	if err := r.client.Set(ctx, r.key, strconv.FormatFloat(v, 'g', -1, 64), 0).Err(); err != nil {
		return fmt.Errorf("keeping the memory in Redis: %w", err)
	}
	return nil
}

// registerMemory registers Memory.Store and calc://memory, on mem (a
// register of this process when nil).
func registerMemory(reg *otc.Registry, mem register) error {
	if mem == nil {
		mem = &localRegister{}
	}
	h, err := resource.Register(reg, resource.Resource{
		URI: "calc://memory", Name: "memory", Title: "Memory",
		Description: "The number Memory.Store kept last, as JSON ({\"value\": null} before any); subscribe to be told when it changes.", MIMEType: "application/json",
	}, func(ctx context.Context) (MemoryContents, error) {
		v, ok, err := mem.load(ctx)
		if err != nil || !ok {
			return MemoryContents{}, err
		}
		return MemoryContents{Value: &v}, nil
	})
	if err != nil {
		return err
	}
	return otc.Register(reg, otc.Tool{
		ID:                "Memory.Store",
		Version:           "1.0.0",
		Description:       "Keeps a number in the calculator's memory, in place of the one kept before; the resource calc://memory holds it, and its subscribers are told.",
		OutputDescription: "The number kept.",
		Title:             "Keep a number in memory",
		// It replaces the number kept before; keeping the same number
		// twice leaves the memory as once.
		Annotations: &otc.ToolAnnotations{ReadOnlyHint: new(false), DestructiveHint: new(true), IdempotentHint: new(true), OpenWorldHint: new(false)},
	}, func(ctx context.Context, in MemoryInput) (float64, error) {
		if math.IsNaN(in.Value) || math.IsInf(in.Value, 0) {
			return 0, &otc.ToolError{Message: "The memory keeps finite numbers only."}
		}
		if err := mem.store(ctx, in.Value); err != nil {
			return 0, err
		}
		h.Changed()
		return in.Value, nil
	})
}
