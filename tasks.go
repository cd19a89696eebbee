package otc

import (
	"fmt"
)

// This file is the protocol-neutral half of tasks: a call that the server
// answers at once with a handle, runs in the background, and whose status
// and result the client asks for later (MCP's tasks extension,
// io.modelcontextprotocol/tasks). A tool says whether its calls may run so
// with [Tool.Tasks]; a store of package tasks keeps them, so that any replica can
// report on a task another one runs. The mcp package serves them.

// TaskSupport says whether the calls of a tool may run as tasks.
type TaskSupport uint8

const (
	// TasksForbidden, the zero value, keeps every call of the tool
	// synchronous: the caller waits for the result on its connection.
	TasksForbidden TaskSupport = iota
	// TasksOptional lets the server run a call as a task when the caller
	// can take one (over MCP, a client that declares the tasks
	// extension), and runs it synchronously for any other caller.
	TasksOptional
	// TasksRequired runs the tool only as a task: for a tool whose work
	// outlasts what a connection should be held for (a report, a build,
	// an export). A caller that cannot take a task is refused without
	// the function running: over MCP 2026-07-28, a client that did not
	// declare the tasks extension gets error -32021 naming it; over OTC,
	// the REST view, and MCP versions before 2026-07-28, which have no
	// tasks, the call is answered with a tool error whose can_retry is
	// false and whose message says to call the tool over MCP with tasks.
	// The refusal does not block up to the tool's timeout: a caller that
	// must wait minutes on a connection is what the mark rules out.
	TasksRequired
)

// String returns "forbidden", "optional" or "required", as MCP names a
// tool's task support.
func (t TaskSupport) String() string {
	switch t {
	case TasksForbidden:
		return "forbidden"
	case TasksOptional:
		return "optional"
	case TasksRequired:
		return "required"
	}
	return fmt.Sprintf("TaskSupport(%d)", uint8(t))
}

// taskRequired is the answer to a call of a TasksRequired tool that does
// not run as a task.
func taskRequired(c *Call) CallResult {
	name := c.tool.def.Name
	return CallResult{CallID: c.CallID, outcome: OutcomeRefused, Error: &ToolError{
		Message: fmt.Sprintf("Tool '%s' runs only as a task, which this connection cannot take: it was not run. "+
			"Call it over MCP (protocol version 2026-07-28) from a client that declares the io.modelcontextprotocol/tasks extension, and poll the task for its result.", name),
		DeveloperMessage: fmt.Sprintf("%s is registered with Tasks: TasksRequired; only an adapter that runs the call as a task (CallRequest.AsTask) may run it", c.tool.def.ID),
	}}
}
