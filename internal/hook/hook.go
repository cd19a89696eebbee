// Package hook is how package otc lends the packages beside it (resource,
// prompt, mcp, federation) what they need of a registry without growing
// otc's API: a place on each registry for what they register, word of the
// changes of its tools, the typed input a tool has (prepared the same way
// for a template's variables and a prompt's arguments), a policy's checks,
// the registry's invalid-input error, and a call's protocol.
// Package otc sets the functions when it is initialized; nothing else
// sets them.
package hook

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"sync"
)

// Attached returns the values the packages beside otc keep on a registry
// (an *otc.Registry), by keys of their own types.
var Attached func(reg any) *sync.Map

// WatchTools calls f after each change of the catalog of tools of the
// registry reg (a registration, a removal), until stop is called. f runs
// while the registry is locked: it must not block, nor register.
var WatchTools func(reg any, f func()) (stop func())

// Input prepares typed input of type t as the registry reg prepares a
// tool's: the JSON Schema of its parameters, reflected from t with its
// tags (every top-level parameter described), and a function that
// validates a JSON object against it and returns what t is decoded from
// (defaults filled in), or the registry's invalid-input error (an
// *otc.Error naming each parameter).
var Input func(reg any, t reflect.Type) (schema json.RawMessage, prepare func(input []byte) ([]byte, error), err error)

// PolicyProblem says what is wrong with a policy (an *otc.Policy), as
// registering a tool with it would, or "" when nothing is.
var PolicyProblem func(p any) string

// Admits returns the check of policy p (an *otc.Policy, or nil) for an
// entry whose audience by default is subject: Policy.Admits of the
// caller of ctx through protocol, with the policy copied (so that
// changing it afterwards changes nothing) and what it asks of a caller
// worked out once, here.
var Admits func(p any, subject string) func(ctx context.Context, protocol string) bool

// Guard returns, for an *otc.Policy p (nil for none) of the entry named
// subject, what a read or a render of the entry checks beyond its
// listing (Admits): the token's revocation and, for an execution-bound
// policy, the token's binding to the request and its single use. The
// value is opaque, for callin.RunReadable; nil checks nothing.
var Guard func(p any, subject string) any

// InvalidInput is the registry's invalid-input error (an *otc.Error)
// with the problems of the parameters named, or, with none, message as
// the developer's detail.
var InvalidInput func(params map[string]string, message string) error

// Protocol is the wire format the call of ctx came through
// (otc.CallRequest.Protocol), or "" outside a call.
var Protocol func(ctx context.Context) string

// Definitions returns the revision of the catalog of the registry reg and
// its tools' definitions in catalog order: a []*otc.ToolDefinition shared
// with the catalog, to be read and never changed. A definition that did
// not change from one revision to the next is the same pointer in both.
var Definitions func(reg any) (revision uint64, defs any)

// SearchTools answers the search a request's query parameters ask for
// ("q", and "limit", the default when absent): the tools of the registry
// reg that the request's caller sees through protocol and that match q,
// best first, as their ids ("Toolkit.Tool@x.y.z"), or an error for a
// query or limit that cannot be searched with (an *otc.Error naming it),
// or for a caller who searched too often (an *otc.Error of code
// otc.CodeRateLimited). Package search sets it when a program links it
// in; nil means the program searches nothing.
var SearchTools func(r *http.Request, reg any, protocol string) ([]string, error)
