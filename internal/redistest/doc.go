// Package redistest starts a redis-server for tests: on a free port of
// the loopback interface, without persistence, with the DEBUG command
// allowed from loopback (so that tests can stall it with DEBUG SLEEP),
// stopped by Server.Stop and started again, empty, on the same port by
// Server.Restart. Tests that need one and find none skip, unless the
// environment sets OTC_REQUIRE_REDIS=1 (as .ci/run does), when they fail.
package redistest
