//go:build unix

package client

import (
	"errors"
	"os/exec"
	"syscall"
)

// ownGroup makes cmd start in a process group of its own, so that the
// processes it starts can be stopped with it; a command whose
// SysProcAttr the caller set is left as it is.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
}

// signalGroup sends sig to the process group cmd leads (every process
// it started that did not leave it), or to cmd's process alone when it
// leads none; it reports whether anything was there to signal.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) bool {
	if cmd.Process == nil {
		return false
	}
	pid := cmd.Process.Pid
	if cmd.SysProcAttr != nil && cmd.SysProcAttr.Setpgid {
		return !errors.Is(syscall.Kill(-pid, sig), syscall.ESRCH)
	}
	return !errors.Is(syscall.Kill(pid, sig), syscall.ESRCH)
}

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)
