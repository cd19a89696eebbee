package mount

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// DefaultGracePeriod is how long [Serve] lets in-flight requests run once
// it begins to shut down, when [ServeOptions.GracePeriod] is zero. It is
// Kubernetes' default termination grace period, so a pod stopped with the
// defaults is not killed while Serve still waits.
const DefaultGracePeriod = 30 * time.Second

// Drainable is what [Serve] marks not ready when shutdown begins. A
// [*otc.Handler] is one: once SetReady(false) is called, its GET /health
// answers 503 and it refuses new calls. A Drainable that also has a
// SetDraining(bool) method, as [*otc.Handler] does, is told SetDraining(true)
// instead: its health checks fail while it still takes calls.
type Drainable interface {
	SetReady(ready bool)
}

// drainer is a Drainable whose health checks can fail while it still
// takes calls.
type drainer interface {
	SetDraining(draining bool)
}

// ServeOptions configures [Serve]. The zero value, and nil, give the
// defaults described on each field.
type ServeOptions struct {
	// Drain lists the handlers to mark as going away as soon as shutdown
	// begins, so that health checks see 503 while requests already running
	// finish: SetDraining(true) for those that have it, as a [*otc.Handler]
	// does, which goes on taking the calls a load balancer sends before it
	// notices; SetReady(false), which refuses them, for the others. Nil
	// entries are skipped. Nil means none.
	Drain []Drainable

	// DrainDelay is how long to keep accepting connections after marking
	// the handlers not ready and before closing the listener. A load
	// balancer only stops sending traffic after its health checks have
	// seen 503 a few times; closing the listener at once would refuse
	// connections it still sends. Set it to the check interval times the
	// failure threshold. Zero means no delay, which suits a server no
	// load balancer probes.
	DrainDelay time.Duration

	// GracePeriod is how long requests in flight may still run once the
	// listener is closed (after DrainDelay). Requests still running then
	// are cut off: their connections are closed, and their contexts, and
	// so the tool functions' contexts, are cancelled. Zero or less means
	// DefaultGracePeriod. Shutting down may take DrainDelay plus
	// GracePeriod in all, so the time a supervisor allows before it kills
	// the process must be longer than the sum.
	GracePeriod time.Duration

	// Logger receives one line when shutdown begins, one when it ends and
	// one for each failure. Nil means slog.Default().
	Logger *slog.Logger
}

// Serve serves srv on ln until ctx is done, then shuts down gracefully:
// it marks the [ServeOptions.Drain] handlers as draining, keeps serving for
// [ServeOptions.DrainDelay], closes the listener and idle connections,
// and waits up to [ServeOptions.GracePeriod] for requests in flight to
// finish. ctx is typically the one [os/signal.NotifyContext] returns for
// SIGINT and SIGTERM. opts may be nil.
//
// Serve returns nil once every request has finished. If the grace period
// runs out first, it closes the remaining connections and returns an
// error wrapping [context.DeadlineExceeded]. If serving fails before ctx
// is done or during the drain delay (the listener breaks), Serve drains
// the connections it already has in the same way, then returns an error
// wrapping the listener's. If the program itself shuts srv down
// (srv.Shutdown or srv.Close) before the grace period begins, Serve
// returns nil at once and leaves the waiting to that caller, as
// [http.Server.Serve] does; calling srv.Close on a second signal is how
// to cut the drain delay short.
//
// Serve does not wait for hijacked connections (WebSockets); register
// their shutdown with [http.Server.RegisterOnShutdown]. srv cannot be
// served again after Serve returns.
//
// It returns an error without serving if srv or ln is nil.
func Serve(ctx context.Context, srv *http.Server, ln net.Listener, opts *ServeOptions) error {
	// An options struct rather than more parameters: every field has a
	// useful zero value, and most callers set one or two.
	if srv == nil {
		return errors.New("mount: Serve: the *http.Server is nil")
	}
	if ln == nil {
		return errors.New("mount: Serve: the listener is nil; pass the one net.Listen returned")
	}
	var o ServeOptions
	if opts != nil {
		o = *opts
	}
	grace := o.GracePeriod
	if grace <= 0 {
		grace = DefaultGracePeriod
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.Default()
	}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	var serveErr error
	select {
	case err := <-served:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		serveErr = fmt.Errorf("mount: Serve: serving stopped: %w", err)
	case <-ctx.Done():
	}

	// Not ready first, then the log line, so that whoever reads the log
	// knows /health already answers 503.
	for _, d := range o.Drain {
		switch d := d.(type) {
		case nil:
		case drainer:
			d.SetDraining(true)
		default:
			d.SetReady(false)
		}
	}
	if serveErr != nil {
		logger.Error("otc: serving stopped; draining the connections already open", "error", errors.Unwrap(serveErr), "grace_period", grace)
	} else {
		logger.Info("otc: shutting down", "drain_delay", o.DrainDelay, "grace_period", grace)
	}
	// The delay only helps while the listener still accepts, so it is
	// skipped when serving has already failed, and cut short when it
	// fails or the program closes srv (on a second signal, say).
	if serveErr == nil && o.DrainDelay > 0 {
		t := time.NewTimer(o.DrainDelay)
		select {
		case <-t.C:
		case err := <-served:
			t.Stop()
			if errors.Is(err, http.ErrServerClosed) {
				return nil
			}
			serveErr = fmt.Errorf("mount: Serve: serving stopped: %w", err)
			logger.Error("otc: serving stopped during the drain delay", "error", err)
		}
	}

	// ctx is done by now, so the grace period needs a deadline of its
	// own.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serveErr == nil {
		// Shutdown has waited for the accept loop to end, so srv.Serve
		// has returned, or is about to: ErrServerClosed, unless the
		// listener failed just before Shutdown closed it.
		if e := <-served; !errors.Is(e, http.ErrServerClosed) {
			serveErr = fmt.Errorf("mount: Serve: serving stopped: %w", e)
		}
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		_ = srv.Close() // its error is the listener's, already reported by Shutdown
		logger.Error("otc: requests still running after the grace period were cut off", "grace_period", grace)
		return errors.Join(serveErr, fmt.Errorf(
			"mount: Serve: requests still running %v after the listener closed were cut off; raise ServeOptions.GracePeriod if they need longer: %w",
			grace, err))
	case err != nil:
		return errors.Join(serveErr, fmt.Errorf("mount: Serve: closing the listener: %w", err))
	}
	if serveErr == nil {
		logger.Info("otc: shut down cleanly")
	}
	return serveErr
}
