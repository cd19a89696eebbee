// Package wire holds the HTTP plumbing every wire-format handler of the
// module shares: reading a request body within limits, the buffer pool,
// and the write deadline of a call's answer.
package wire
