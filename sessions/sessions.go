// Package sessions keeps what the sessions of an MCP server's clients
// share across the server's replicas: which sessions are alive, what each
// subscribed to, and a log of what sessions must be told (a resource
// changed, a list changed, a session ended), which every replica follows,
// so that a change made on one replica reaches a client whose stream
// another replica holds.
//
// [MemoryStore] keeps them in one process; the redisstore module keeps
// them in Redis (redisstore.NewSessionStore), for replicas behind a load
// balancer with no sticky routing. The mcp package is this package's
// user (mcp.Options.Sessions): a program picks a store and hands it over.
package sessions

import (
	"context"
	"errors"
	"time"
)

// ErrNotFound is the error of a session that ended (its client ended it,
// or it expired, idle): the client begins a new one.
var ErrNotFound = errors.New("sessions: the session has ended or expired")

// ErrLimit is the error of a session, or a subscription, that a bound
// refuses (wrapped, with the bound's name).
var ErrLimit = errors.New("sessions: over the limit")

// Session names a session: its id, which the store keys it by, and its
// owner (the caller that began it), by which it is counted.
type Session struct {
	ID    string
	Owner string
}

// Limits bound the sessions a store holds: in all, and of one owner.
// Zero is no bound.
type Limits struct {
	Total    int
	PerOwner int
}

// Message is one entry of the log: its ID, which the store assigns and
// which orders the log, and its data, which the store does not read.
type Message struct {
	ID   string
	Data []byte
}

// Store keeps sessions and the log of their events. Every method is safe
// for concurrent use, by the replicas of one deployment at once.
type Store interface {
	// Open records a new session, alive for idle unless touched again.
	// It fails with an error wrapping ErrLimit when the store holds
	// lim.Total sessions, or the owner lim.PerOwner.
	Open(ctx context.Context, s Session, idle time.Duration, lim Limits) error
	// Touch keeps a session alive for another idle; ErrNotFound when it
	// has ended or expired.
	Touch(ctx context.Context, s Session, idle time.Duration) error
	// End ends a session, forgetting its subscriptions; a session that
	// has ended already is no error.
	End(ctx context.Context, s Session) error

	// Subscribe adds uri to the session's subscriptions: ErrNotFound when
	// the session has ended, an error wrapping ErrLimit when it holds
	// max subscriptions already (uri not among them).
	Subscribe(ctx context.Context, s Session, uri string, max int) error
	// Unsubscribe removes uri from the session's subscriptions.
	Unsubscribe(ctx context.Context, s Session, uri string) error
	// Subscriptions lists the session's subscriptions, in no order.
	Subscriptions(ctx context.Context, s Session) ([]string, error)

	// Publish appends data to the log, to be read by every Follow.
	Publish(ctx context.Context, data []byte) error
	// Follow calls f with each message of the log after the one whose ID
	// is after ("" for the messages published from now on), in order,
	// until ctx ends (it then returns nil) or the store fails (it returns
	// the error; the caller follows again from the last ID it had, and
	// may read what it missed with Since).
	Follow(ctx context.Context, after string, f func(Message)) error
	// Head returns the ID of the newest message of the log, from which a
	// Follow reads what comes next ("" when the log is empty and Follow
	// from "" reads it all).
	Head(ctx context.Context) (string, error)
	// Since returns the messages of the log after the one whose ID is
	// after, oldest first, and whether the log still holds all of them: a
	// log keeps a bounded window, and false says that some of them may be
	// gone (or that after is no ID of the log's).
	Since(ctx context.Context, after string) ([]Message, bool, error)
}
