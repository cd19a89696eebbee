package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCallTaskAgainstExample: otc call --task against the conformance
// example, built and run as a process: a tool that runs as a task, one
// that asks through its task, and one that asks in rounds, then becomes a
// task.
func TestCallTaskAgainstExample(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs examples/conformance")
	}
	bin := filepath.Join(t.TempDir(), "conformance")
	build := exec.Command("go", "build", "-o", bin, "../../examples/conformance")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())

	srv := exec.Command(bin, "-addr", "127.0.0.1:0")
	stderr, err := srv.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, srv.Start())
	t.Cleanup(func() {
		_ = srv.Process.Signal(os.Interrupt)
		_ = srv.Wait()
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`url=(http://\S+/mcp)`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	var url string
	select {
	case url = <-urls:
	case <-time.After(30 * time.Second):
		t.Fatal("the example did not start")
	}

	t.Run("slow_compute", func(t *testing.T) {
		code, out, errOut := otcTerm(context.Background(), terminalFeatures{}, "", "call", "--mcp", "--task", url, "slow_compute", "seconds=1", "label=Q3")
		require.Equal(t, exitOK, code, errOut)
		assert.Equal(t, "Computed \"Q3\" after 1s.\n", out)
		assert.Contains(t, errOut, ": completed")
	})
	t.Run("confirm_delete", func(t *testing.T) {
		code, out, errOut := otcTerm(context.Background(), onTerminal, "a\nyes\n", "call", "--mcp", "--task", url, "confirm_delete", "filename=a.txt")
		require.Equal(t, exitOK, code, errOut)
		assert.Equal(t, "Deleted a.txt.\n", out)
		assert.Contains(t, errOut, "The tool asks: Delete a.txt?")
	})
	t.Run("test_tool_with_task", func(t *testing.T) {
		code, out, errOut := otcTerm(context.Background(), onTerminal, "a\nAlice\n", "call", "--mcp", "--task", url, "test_tool_with_task")
		require.Equal(t, exitOK, code, errOut)
		assert.Equal(t, "Hello, Alice, from a task.\n", out)
	})
	t.Run("without_terminal", func(t *testing.T) {
		code, _, errOut := otcTerm(context.Background(), terminalFeatures{}, "", "call", "--mcp", "--task", url, "test_tool_with_task")
		assert.Equal(t, exitInput, code)
		assert.Contains(t, errOut, "What is your user_name?")
	})
}
