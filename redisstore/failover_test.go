package redisstore_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/redistest"
	"github.com/otcgo/otc/redisstore"
	"github.com/otcgo/otc/tasks"
)

// owner returns the master that serves key's slot and its replica, as
// CLUSTER NODES lists them, once it lists both: after a failover, the old
// master is a master without slots until it learns that it is now a
// replica.
func owner(t *testing.T, c *redistest.Cluster, client *redis.ClusterClient, key string) (master, replica string) {
	t.Helper()
	slot, err := client.ClusterKeySlot(context.Background(), key).Result()
	require.NoError(t, err)
	var out string
	require.Eventually(t, func() bool {
		for _, a := range c.Addrs {
			if out, err = c.Do(a, "CLUSTER", "NODES"); err == nil && !strings.Contains(out, "refused") {
				break
			}
		}
		master, replica = parseOwner(out, slot)
		return replica != ""
	}, 20*time.Second, 100*time.Millisecond, "a master with a replica serves slot %d:\n%s", slot, out)
	return master, replica
}

// replicatedID returns base, or base with a suffix, such that the key
// prefix+id is served by a master with a replica.
func replicatedID(t *testing.T, c *redistest.Cluster, client *redis.ClusterClient, prefix, base string) string {
	t.Helper()
	var out string
	for _, a := range c.Addrs {
		var err error
		if out, err = c.Do(a, "CLUSTER", "NODES"); err == nil && !strings.Contains(out, "refused") {
			break
		}
	}
	for i := range 1000 {
		id := base
		if i > 0 {
			id += "-" + strconv.Itoa(i)
		}
		slot, err := client.ClusterKeySlot(context.Background(), prefix+id).Result()
		require.NoError(t, err)
		if _, replica := parseOwner(out, slot); replica != "" {
			return id
		}
	}
	t.Fatalf("no master of the cluster has a replica:\n%s", out)
	return ""
}

// parseOwner reads, in the output of CLUSTER NODES, the master that
// serves slot and its replica ("" when it has none).
func parseOwner(out string, slot int64) (master, replica string) {
	addrOf := func(f string) string { a, _, _ := strings.Cut(f, "@"); return a }
	var masterID string
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) < 9 || !strings.Contains(f[2], "master") {
			continue
		}
		for _, r := range f[8:] {
			lo, hi, _ := strings.Cut(r, "-")
			if hi == "" {
				hi = lo
			}
			l, err1 := strconv.ParseInt(lo, 10, 64)
			h, err2 := strconv.ParseInt(hi, 10, 64)
			if err1 == nil && err2 == nil && l <= slot && slot <= h {
				masterID, master = f[0], addrOf(f[1])
			}
		}
	}
	if masterID == "" {
		return "", ""
	}
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) >= 4 && strings.Contains(f[2], "slave") && f[3] == masterID {
			replica = addrOf(f[1])
		}
	}
	return master, replica
}

// redisKey is the key the idempotency store keeps key under.
func redisKey(prefix, key string) string {
	sum := sha256.Sum256([]byte(key))
	return prefix + hex.EncodeToString(sum[:])
}

// claimAgain claims key until Redis answers (a failover makes it refuse
// for a moment), and returns what it found.
func claimAgain(t *testing.T, s *redisstore.IdempotencyStore, key string) (*otc.IdempotencyRecord, otc.IdempotencyClaim) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		rec, c, err := s.Claim(context.Background(), key, "fp")
		if err == nil {
			return rec, c
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cluster did not answer a claim within 20s: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestClusterFailover: the record of a call in flight, its claim and
// lease in one key, survives a failover of the master that serves it: a
// coordinated one (CLUSTER FAILOVER, the replica taking over once it has
// every write) and a crash of the master (killed; its replica promoted by
// the cluster) after the claim had reached the replica. A retry during
// and after either finds the call in flight and does not run it again,
// and the call's outcome is recorded on the new master and replayed.
func TestClusterFailover(t *testing.T) {
	c := replicatedCluster.need(t)
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
	t.Cleanup(func() { client.Close() })
	prefix := clusterPrefix(t)
	store := redisstore.NewIdempotencyStore(client, &redisstore.IdempotencyOptions{Prefix: prefix, Lease: 10 * time.Second, PollInterval: 10 * time.Millisecond})
	ctx := context.Background()

	for _, kind := range []string{"coordinated", "crash"} {
		t.Run(kind, func(t *testing.T) {
			key := "alice/failover-" + kind
			rec, claim, err := store.Claim(ctx, key, "fp")
			require.NoError(t, err)
			require.Nil(t, rec)
			require.NotNil(t, claim, "the call is claimed, and runs")
			master, replica := owner(t, c, client, redisKey(prefix, key))
			// The claim reaches the replica (replication is asynchronous;
			// WAIT says when it has).
			require.NoError(t, waitReplicated(client, redisKey(prefix, key)))

			switch kind {
			case "coordinated":
				out, err := c.Do(replica, "CLUSTER", "FAILOVER")
				require.NoError(t, err, out)
			case "crash":
				c.Kill(master)
			}
			// During the failover, and after it, a retry finds the call in
			// flight.
			rec, other := claimAgain(t, store, key)
			assert.Nil(t, other, "a retry does not claim the call again")
			require.NotNil(t, rec)
			assert.False(t, rec.Done)
			require.Eventually(t, func() bool {
				out, err := c.Do(replica, "ROLE")
				return err == nil && strings.HasPrefix(strings.TrimSpace(out), "master")
			}, 20*time.Second, 50*time.Millisecond, "the replica became the master")
			rec, other = claimAgain(t, store, key)
			assert.Nil(t, other, "nor after the failover")
			require.NotNil(t, rec)

			require.NoError(t, claim.Complete(ctx, []byte("outcome")), "the outcome is written to the new master")
			rec, other = claimAgain(t, store, key)
			assert.Nil(t, other)
			assert.Equal(t, &otc.IdempotencyRecord{Fingerprint: "fp", Done: true, Outcome: []byte("outcome")}, rec, "and replayed")
			v, err := c.Do(replica, "GET", redisKey(prefix, key))
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(v, "D"), "the new master holds the outcome: %q", v)
		})
	}
}

// waitReplicated waits until the node serving key has sent its writes to
// its replica. After an earlier failover the client's map of the cluster
// may still name the old master, which refuses WAIT as a replica: the map
// is then reloaded and WAIT asked again, for a few seconds.
func waitReplicated(c *redis.ClusterClient, key string) error {
	ctx := context.Background()
	var err error
	for range 50 {
		var master *redis.Client
		if master, err = c.MasterForKey(ctx, key); err == nil {
			if err = master.Wait(ctx, 1, 5*time.Second).Err(); err == nil {
				return nil
			}
		}
		c.ReloadState(ctx)
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// TestClusterTaskFailover: a task kept on a Redis Cluster survives the
// crash of the master that serves it (killed, its replica promoted): the
// task store finds the new master by itself, as the idempotency store
// does, so that the task is read while and after the cluster fails over,
// and its outcome is recorded on the new master.
func TestClusterTaskFailover(t *testing.T) {
	c := replicatedCluster.need(t)
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
	t.Cleanup(func() { client.Close() })
	prefix := clusterPrefix(t)
	store := redisstore.NewTaskStore(client, &redisstore.TaskOptions{Prefix: prefix, Lease: 30 * time.Second, OpTimeout: 500 * time.Millisecond})
	ctx := context.Background()

	// A task whose slot a master with a replica serves: an earlier test
	// may have left a master without one (its replica killed).
	id := replicatedID(t, c, client, prefix+"t:", "task-failover-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	_, err := store.Create(ctx, &tasks.Task{ID: id, Owner: "alice", Status: tasks.Working})
	require.NoError(t, err)
	key := prefix + "t:" + id
	master, replica := owner(t, c, client, key)
	require.NoError(t, waitReplicated(client, key))
	c.Kill(master)

	// Read until the cluster answers: the task is there, still working.
	var got *tasks.Task
	require.Eventually(t, func() bool {
		got, err = store.Get(ctx, id)
		return err == nil
	}, 20*time.Second, 100*time.Millisecond, "the task store reached the new master: %v", err)
	assert.Equal(t, tasks.Working, got.Status)
	assert.Equal(t, "alice", got.Owner)
	require.Eventually(t, func() bool {
		out, err := c.Do(replica, "ROLE")
		return err == nil && strings.HasPrefix(strings.TrimSpace(out), "master")
	}, 20*time.Second, 50*time.Millisecond, "the replica became the master")

	done, err := store.Update(ctx, id, &tasks.Update{Status: tasks.Completed, Result: json.RawMessage(`{"ok":true}`)})
	require.NoError(t, err, "the outcome is written to the new master")
	assert.Equal(t, tasks.Completed, done.Status)
	v, err := c.Do(replica, "HGET", key, "s")
	require.NoError(t, err)
	assert.Equal(t, string(tasks.Completed), strings.TrimSpace(v), "the new master holds it")
}
