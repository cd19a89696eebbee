//go:build race

package otc_test

func init() { raceEnabled = true }
