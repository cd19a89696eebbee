package redisstore_test

import (
	"testing"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/redisstore"
)

func TestTaskStore(t *testing.T) {
	client := needRedis(t)
	testkit.TaskStoreContract(t, func(t *testing.T, l testkit.TaskLimits) otc.TaskStore {
		return redisstore.NewTaskStore(client, &redisstore.TaskOptions{Prefix: freshPrefix(t, client), TTL: l.TTL, Lease: l.Lease,
			MaxTasksPerOwner: l.PerOwner, MaxResultBytes: l.MaxResult})
	})
}
