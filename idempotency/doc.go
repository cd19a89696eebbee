// Package idempotency holds the in-memory idempotency store: the record
// of the calls a registry has run, by call id, so that a call sent again
// is answered with the first outcome rather than run twice
// (otc.RegistryOptions.Idempotency). It serves one process, or replicas
// that send each caller to the same one; replicas behind a load balancer
// share a store in Redis (github.com/otcgo/otc/redisstore).
//
//	reg := otc.NewRegistry(&otc.RegistryOptions{Idempotency: idempotency.NewMemoryStore(nil)})
package idempotency
