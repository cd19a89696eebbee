// Package hophdr carries the headers of one request a gateway sends
// upstream on the request's context, from package federation to the
// client's reads, renders and completions (which take no options of
// their own): the caller's token where the upstream takes it, the trace
// context. It is not API.
package hophdr

import (
	"context"
	"net/http"
)

type key struct{}

// With returns ctx carrying h, the headers of the requests made with it.
func With(ctx context.Context, h http.Header) context.Context {
	return context.WithValue(ctx, key{}, h)
}

// From returns the headers ctx carries, or nil.
func From(ctx context.Context) http.Header {
	h, _ := ctx.Value(key{}).(http.Header)
	return h
}
