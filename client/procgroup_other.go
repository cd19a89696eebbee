//go:build !unix

package client

import (
	"os"
	"os/exec"
)

// ownGroup does nothing where there are no process groups.
func ownGroup(*exec.Cmd) {}

// signalGroup stops cmd's process alone: where there are no process
// groups, and no SIGTERM, both signals kill it.
func signalGroup(cmd *exec.Cmd, _ os.Signal) bool {
	if cmd.Process == nil {
		return false
	}
	return cmd.Process.Kill() == nil
}

var (
	sigTerm os.Signal = os.Kill
	sigKill os.Signal = os.Kill
)
