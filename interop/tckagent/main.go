// Command tckagent is the agent the A2A TCK runs against in CI
// (.ci/a2a-tck.sh): an A2A agent built with the a2a package, whose one
// skill answers a message of free text, as the TCK sends it, with a task
// that works for a while (Options.TextTool, a tool whose calls run as
// tasks) and then completes with an answer; it serves push notifications,
// and its tasks are kept in memory. It prints its URL on its first line.
//
//	go run ./tckagent [--addr 127.0.0.1:0] [--work 300ms]
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/a2a"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "the address to listen on")
	work := flag.Duration("work", 300*time.Millisecond, "how long a task works before it answers")
	flag.Parse()
	reg := otc.NewRegistry(nil)
	err := otc.Register(reg, otc.Tool{ID: "Assistant.Reply", Version: "1.0.0", Tasks: otc.TasksOptional,
		Description: "Replies to a message of free text, after working on it for a while."},
		func(ctx context.Context, in struct {
			Text string `json:"text" jsonschema:"description=The message to reply to."`
		}) (string, error) {
			otc.ReportProgress(ctx, 0, 1, "working on it")
			select {
			case <-time.After(*work):
			case <-ctx.Done():
				return "", ctx.Err()
			}
			return "You said: " + in.Text, nil
		})
	if err != nil {
		fmt.Fprintln(os.Stderr, "tckagent:", err)
		os.Exit(1)
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tckagent:", err)
		os.Exit(1)
	}
	// The card names the agent by host name, as a deployed agent's does:
	// the TCK takes an IP address in a public card for a leak.
	url := fmt.Sprintf("http://localhost:%d", l.Addr().(*net.TCPAddr).Port)
	h := a2a.NewHandler(reg, &a2a.Options{Name: "otc TCK agent", URL: url, TextTool: "Assistant.Reply", Push: &a2a.PushOptions{AllowedNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}}})
	mux := http.NewServeMux()
	mux.Handle("/", h)
	fmt.Println(url)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.Serve(l); err != nil {
		fmt.Fprintln(os.Stderr, "tckagent:", err)
		os.Exit(1)
	}
}
