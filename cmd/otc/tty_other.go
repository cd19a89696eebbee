//go:build !linux && !darwin

package main

import "os"

// isTTY reports whether f is a terminal; here, whether it is a character
// device, which /dev/null is too.
func isTTY(f *os.File) bool { return isTerminal(f) }
