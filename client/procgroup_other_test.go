//go:build !unix

package client_test

// runTestProcess: this file's processes are Unix's.
func runTestProcess(string) bool { return false }
