package redisstore_test

import (
	"testing"

	"github.com/otcgo/otc/redisstore"
	"github.com/otcgo/otc/sessions"
	"github.com/otcgo/otc/sessions/storetest"
)

// TestSessionStore holds the Redis store to the contract every session
// store keeps, on a Redis server and on a Redis Cluster.
func TestSessionStore(t *testing.T) {
	t.Run("Redis", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T, logSize int) sessions.Store {
			client := needRedis(t)
			return redisstore.NewSessionStore(client, &redisstore.SessionOptions{Prefix: freshPrefix(t, client), LogSize: logSize})
		})
	})
	t.Run("Cluster", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T, logSize int) sessions.Store {
			return redisstore.NewSessionStore(needCluster(t), &redisstore.SessionOptions{Prefix: clusterPrefix(t), LogSize: logSize})
		})
	})
}
