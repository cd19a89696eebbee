// Package tasks keeps the tasks of a tool server: calls that are answered
// at once with a handle, run in the background, and whose status and
// result the client asks for later: MCP's tasks extension
// (io.modelcontextprotocol/tasks, package mcp) and A2A's tasks (package
// a2a), both configured with [Options] and run by the same rules (the
// caps, leases, cancellation across replicas, questions and answers). A
// tool says whether its calls may run so with otc.Tool.Tasks; a [Store]
// keeps the tasks, so that any replica of a server can report on, answer
// and cancel a task another one runs.
//
// [MemoryStore] keeps them in the process, bounded in tasks, in tasks per
// caller (held and running) and in bytes; the redisstore module
// (github.com/otcgo/otc/redisstore) shares them between replicas. A task
// belongs to the caller that made it, as package
// github.com/otcgo/otc/caller keys it (caller.Key).
//
//	opts := &tasks.Options{Store: tasks.NewMemoryStore(nil)} // or redisstore.NewTaskStore
//	m := mcp.NewHandler(reg, &mcp.Options{Tasks: opts})
//	a := a2a.NewHandler(reg, &a2a.Options{Tasks: opts})
package tasks
