// Package redisstore keeps the record of an otc registry's calls in Redis,
// so that replicas of a tool server behind a load balancer share it: a
// call retried with the same call_id on another replica is answered with
// the first call's outcome instead of running the tool again.
//
//	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
//	reg := otc.NewRegistry(&otc.RegistryOptions{
//		Idempotency: redisstore.NewIdempotencyStore(client, nil),
//	})
//
// # How it works
//
// Each call id is one Redis string, under Options.Prefix followed by the
// SHA-256 of the registry's key (the caller's identity and the call id),
// so that keys are short whatever the identity. The first replica to
// claim a key sets it, atomically, to an in-flight record carrying a
// random claim token, with a lease (Options.Lease) as its expiry: one
// command, SET with NX and GET, which sets the key only if it holds
// nothing and answers what it held (on a Redis older than 7.0, a Lua
// script does the same). While the call runs, the replica renews the
// lease every third of it. The others find the in-flight record and poll
// until it changes. When the call ends, the replica replaces the record,
// if its token still holds it, by the outcome, kept for Options.TTL; or
// deletes it, for a call whose outcome is not recorded. Each step that
// reads and writes a key is one command or one Lua script, so no two
// replicas can both claim one.
//
// A call costs Redis two commands: its claim and its outcome. Those of
// calls that run at the same time go to Redis together: each joins the
// pipeline about to leave, with at most four in flight per store, so
// that under load one round trip carries many calls' commands (Redis's
// cost per small command is mostly the reading and writing of its
// connection), while a call alone is sent at once.
//
// # Redis Cluster
//
// Both stores take any redis.UniversalClient, a cluster client
// included. Every script reads and writes keys of one slot: a call id's
// record and a task are one key each, and a caller's task counts are
// two keys that share a hash tag.
//
// # When Redis fails
//
// Every Redis operation has a deadline, Options.OpTimeout (two seconds by
// default), which the store applies whatever the client's own timeouts:
// a stalled or unreachable Redis costs a call at most that per operation.
// A call makes two (the claim, and the outcome's write or the release),
// so it is answered within its run plus twice OpTimeout. A claim that
// fails is answered at once with a retryable tool error, and the tool
// does not run; if Redis was only slow, it may carry out the claim when
// it wakes, and since nothing renews that claim, it holds its call id
// for one lease, during which retries are told to ask again later. A
// duplicate of a call in flight waits at most the
// registry's IdempotencyWait (ten seconds), then is told to ask again
// later, so that it too is answered within IdempotencyWait plus twice
// OpTimeout: fourteen seconds with the defaults, whatever the stall.
//
// The tool has run once the outcome is written, so a write that Redis
// refuses (full, with the noeviction policy), that fails (Redis down or
// restarting) or that is not answered in time is never a licence to run
// the call again. The caller gets its answer at once; the store keeps
// its claim, renewing the lease, and writes the outcome again in the
// background, with a backoff that starts at a tenth of a second and
// doubles up to a second (a third of the lease, if that is less), until
// Redis records it, the key is found held by another call, Options.TTL
// has passed since the call ended (the outcome would have expired by
// then), or IdempotencyStore.Shutdown stops it. Meanwhile a retry finds the call in
// flight and is told to ask again later; once the outcome is written, it
// is answered with it. Complete reports such an outcome with an error
// wrapping otc.ErrOutcomePending, which the registry logs as a warning.
// A write that a stall delayed, and that Redis carries out when it
// wakes, is recognised by the next attempt as the outcome being
// recorded, not as a lost claim. A server that exits calls
// IdempotencyStore.Shutdown with a deadline of a few seconds, to let such writes
// finish.
//
// A release that fails leaves the key claimed until its lease lapses; a
// retry then runs the call, which is right for a call whose outcome is
// not recorded.
//
// # At least once, when a replica dies
//
// If a replica dies mid-call, nothing renews its lease, the in-flight
// record expires, and a later retry of the call, on any replica, claims
// it again and runs the call: the tool may then run twice for that call
// id. This is the price of not waiting forever for a replica that is
// gone: calls run at most once while replicas live, and at least once
// when one dies during a call. The same holds for a replica that ends,
// or is shut down, while an outcome is still waiting to be written. A
// replica that is only slow keeps its claim, as long as it can reach
// Redis to renew it; one cut off from Redis for longer than the lease
// may find, when it finishes, that another has claimed the key, and its
// outcome is then not recorded (Complete returns otc.ErrClaimLost, which
// the registry logs); if none has, its outcome is recorded all the same.
//
// The same holds when Redis itself loses a record: a primary that fails
// over before its replica has the latest writes, or a restart without
// persistence, forgets claims and outcomes. A replica that still runs
// the call, or still holds an outcome to write, makes its record again
// at its next renewal or write, unless another call has claimed the key
// by then; a retry that reaches Redis before that runs the call again,
// and a recorded outcome that was lost is lost for good.
//
// # Limits
//
// An outcome larger than Options.MaxOutcomeBytes is not stored, and its
// call is not deduplicated. Redis's own memory policy bounds the rest;
// with an eviction policy other than noeviction, Redis may drop records
// before their TTL, and a retry after that runs again. Outcomes waiting
// to be written are held in the process, one per call, each with a
// goroutine; they come only from calls claimed while Redis still took
// writes, since no call is claimed, and none runs, while Redis refuses
// them or does not answer.
//
// # Tasks
//
// [TaskStore] keeps the tasks of MCP's tasks extension and of A2A (see
// [tasks.Store]) in the same Redis, so that any replica answers
// tasks/get, tasks/update and tasks/cancel for a task another one runs:
//
//	h := mcp.NewHandler(reg, &mcp.Options{Tasks: &tasks.Options{
//		Store: redisstore.NewTaskStore(client, nil),
//	}})
//
// Each task is a hash under TaskOptions.Prefix, kept for TaskOptions.TTL
// after its creation; a caller's tasks are counted in a sorted set, to
// hold it to TaskOptions.MaxTasksPerOwner. Every change is one Lua
// script, and the times and leases come from Redis's clock, so that the
// replicas' clocks need not agree. The replica running a task renews its
// lease (TaskOptions.Lease) at each update, which it makes every
// tasks.Options.PollInterval; a replica that dies stops renewing, and
// the task is shown failed, with tasks.Task.Lost, once the lease has
// lapsed. It is not run again. A replica cut off from Redis for longer
// than the lease finds its task failed when it reaches Redis again, and
// stops the call.
package redisstore
