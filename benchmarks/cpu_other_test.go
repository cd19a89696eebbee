//go:build !unix

package benchmarks

import "time"

// processCPU is zero where the process's CPU time is not read: the
// benchmarks that report it report zero.
func processCPU() time.Duration { return 0 }
