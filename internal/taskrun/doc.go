// Package taskrun runs the tasks of the wire formats that serve them (MCP
// and A2A), by one set of rules: a call is admitted before its task is
// kept (Runner.Start, the one starter), a handler runs at most so many
// tasks at once, the replica running a task renews its lease and stops
// the call when the task is cancelled on any replica, questions are asked
// through the store and answered from any replica, and a task's end is
// recorded once. Each format writes its own shapes through RunnerOptions
// (Failure, Said) and is told of each change (Changed).
//
// It is not API: users configure tasks with tasks.Options and keep them in
// a tasks.Store.
package taskrun
