//go:build race

package interop

func init() { raceEnabled = true }
