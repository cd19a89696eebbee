package redisstore

import "github.com/otcgo/otc"

// StopRenewing stops the lease renewals of a claim made by a Store, as
// the death of its replica would, and leaves its record in Redis to
// lapse; the claim can still be completed or released.
func StopRenewing(c otc.IdempotencyClaim) {
	c.(*claim).end()
}
