package mount_test

import (
	"context"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mount"
)

// Serve tools until SIGINT or SIGTERM, then shut down gracefully: /health
// answers 503 for ten seconds so that the load balancer stops sending
// traffic, then the listener closes and calls already running have 30
// seconds to finish.
func ExampleServe() {
	reg := otc.NewRegistry(nil)
	err := otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers together."},
		func(ctx context.Context, in struct {
			A float64 `json:"a" jsonschema:"description=The first number to add."`
			B float64 `json:"b" jsonschema:"description=The second number to add."`
		}) (float64, error) {
			return in.A + in.B, nil
		})
	if err != nil {
		log.Fatal(err)
	}
	h := otc.NewHandler(reg, nil)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Once shutdown has begun, a second signal kills the process at once.
	context.AfterFunc(ctx, stop)

	ln, err := net.Listen("tcp", "127.0.0.1:8080")
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	err = mount.Serve(ctx, srv, ln, &mount.ServeOptions{
		Drain:       []mount.Drainable{h},
		DrainDelay:  10 * time.Second,
		GracePeriod: 30 * time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}
}
