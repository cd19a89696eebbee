//go:build race

package mcp_test

func init() { raceEnabled = true }
