package otc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otcgo/otc/internal/decode"
	"github.com/otcgo/otc/internal/inline"
	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/nearest"
	"github.com/otcgo/otc/internal/validate"
	"github.com/otcgo/otc/internal/viewcache"
	"github.com/otcgo/otc/internal/wire"
)

// RegistryOptions configures a [Registry]. The zero value, and nil, are
// ready to use.
type RegistryOptions struct {
	// Logger receives the panics of tool functions, with their stacks.
	// Nil means slog.Default().
	Logger *slog.Logger

	// AuthorizationChallenge, when set, is asked where a user goes to grant
	// an authorization a tool requires and the call lacked. The challenges
	// it returns are listed in missing_requirements.authorization; a nil
	// return leaves that provider out. Without it the list is omitted and
	// the missing providers are named only in the error message.
	AuthorizationChallenge func(ctx context.Context, toolID string, req AuthorizationRequirement, userID string) *AuthorizationChallenge

	// Middleware wraps every call, over every wire format (see
	// [Middleware]). The first is the outermost: it runs first before the
	// call and last after it, so list observers that must see everything,
	// such as logging and tracing, before middleware that may refuse. All
	// of them run after the tool is resolved and before its requirements
	// are checked, its input validated, its limits applied and its
	// function run, in that order.
	Middleware []Middleware

	// DefaultTimeout bounds the run of a tool function whose Tool.Timeout
	// is zero. Zero means no limit: tools differ too much (an addition, a
	// report that takes minutes) for the library to pick one, so set it
	// to what your slowest honest tool needs.
	DefaultTimeout time.Duration

	// DefaultMaxConcurrent caps the calls of one tool version running at
	// once, for tools whose Tool.MaxConcurrent is zero, and the reads or
	// renders of a resource, template or prompt whose own is. Zero means no
	// limit: the server's own limits (connections, the machine) apply.
	DefaultMaxConcurrent int

	// BusyRetryAfter is the retry_after_ms hint of a call refused because
	// its tool was running its maximum of concurrent calls. Zero means
	// DefaultBusyRetryAfter.
	BusyRetryAfter time.Duration

	// StrictNulls keeps JSON null out of optional parameters. By default
	// a call may send null for an optional parameter of a reflected input
	// schema (one with omitempty and without jsonschema:"required"), which
	// the function sees as absent: the zero value, or nil, or the
	// parameter's default. Models send null for "not given" all the time.
	// The published schema does not say so (an optional parameter is
	// published as its plain schema, left out of "required"), so that
	// converters that drop anyOf branches keep its type and rules; the
	// leniency is the validator's. With StrictNulls, null is refused
	// unless the field is tagged jsonschema:"nullable". Hand-written input
	// schemas are never changed.
	StrictNulls bool

	// Idempotency, when set, makes call_id an idempotency key: a call
	// whose call id the same caller already used for the same tool and
	// input is answered with the outcome the first call recorded, and the
	// function does not run again. Nil turns this off. See the guide
	// docs/idempotency.md for what is recorded and for how long;
	// idempotency.NewMemoryStore (package github.com/otcgo/otc/idempotency)
	// keeps the record in the process, and the
	// github.com/otcgo/otc/redisstore module in Redis, shared by
	// replicas.
	//
	// The key is the call id together with the caller's identity (the
	// [Identity] the handler's authenticator proved: its method, issuer
	// and name). Without authentication every caller is the same
	// anonymous caller, and shares one space of call ids.
	Idempotency IdempotencyStore

	// ListEveryTool lists every tool in every caller's catalog, as this
	// library did before catalogs were made per caller. By default each
	// catalog a handler serves (GET /tools, the REST planner view, MCP
	// tools/list, the registry view's listing) lists only the tools the
	// caller could call, as [Registry.Visibility] decides from the
	// caller's identity and each tool's [Policy]: a caller that proved
	// nothing, or only an API key, does not see the tools that need a
	// token; a token without a tool's scopes or capabilities does not see
	// that tool. Calls are checked the same either way.
	//
	// Per-caller catalogs are the default because a model chooses from
	// what it is shown: a tool it cannot call costs it context and a
	// refused call, and a registry that mixes tools for several
	// audiences (read-only agents, operators) should show each its own.
	// A registry without such policies lists every tool to everyone
	// whatever this says, at no cost. Set ListEveryTool when callers are
	// expected to discover what they lack: an OAuth client steps up (asks
	// for more scopes) only after it has tried a tool it could see.
	ListEveryTool bool

	// IdempotencyWait bounds how long a call waits for another call with
	// its call id that is in flight (running, or whose outcome the store
	// is still trying to record) before it is answered with a tool error
	// whose can_retry is true, "still running; ask again later", without
	// running. Its own context bounds the wait too. Zero or less means
	// DefaultIdempotencyWait.
	IdempotencyWait time.Duration
}

// DefaultBusyRetryAfter is the default of [RegistryOptions.BusyRetryAfter]:
// one second, a pause in which a few short calls finish, and about what an
// agent takes to decide anew.
const DefaultBusyRetryAfter = time.Second

// Registry holds the registered tools and runs calls to them. It is safe
// for concurrent use, including registering tools while calls are served:
// each call sees the catalog as it was when the call began.
type Registry struct {
	logger    *slog.Logger
	challenge func(ctx context.Context, toolID string, req AuthorizationRequirement, userID string) *AuthorizationChallenge

	chain          CallFunc // the middleware around core
	timeout        time.Duration
	maxConcurrent  int
	busyRetryAfter time.Duration
	idem           IdempotencyStore
	idemInProcess  bool          // idem keeps its record in this process (idempotency.MemoryStore)
	idemWait       time.Duration // see RegistryOptions.IdempotencyWait
	tokens         ledger        // spent execution-bound token ids
	once           ledger        // other single-use keys (requestStates)
	strictNulls    bool
	listEvery      bool // see RegistryOptions.ListEveryTool

	mu      sync.Mutex // serializes registrations
	current atomic.Pointer[catalog]

	// attached holds what the packages beside this one register on the
	// registry (resources, prompts), by keys of their own; watchers are
	// told of each change of the catalog: see extend.go.
	attached sync.Map
	watchers sync.Map // *func() → struct{}
}

// NewRegistry returns an empty registry. opts may be nil.
func NewRegistry(opts *RegistryOptions) *Registry {
	if opts == nil {
		opts = &RegistryOptions{}
	}
	r := &Registry{
		logger:         opts.Logger,
		challenge:      opts.AuthorizationChallenge,
		timeout:        opts.DefaultTimeout,
		maxConcurrent:  opts.DefaultMaxConcurrent,
		busyRetryAfter: opts.BusyRetryAfter,
		idem:           opts.Idempotency,
		idemWait:       opts.IdempotencyWait,
		strictNulls:    opts.StrictNulls,
		listEvery:      opts.ListEveryTool,
	}
	if r.logger == nil {
		r.logger = slog.Default()
	}
	if r.busyRetryAfter <= 0 {
		r.busyRetryAfter = DefaultBusyRetryAfter
	}
	if r.idemWait <= 0 {
		r.idemWait = DefaultIdempotencyWait
	}
	if s, ok := r.idem.(interface{ InProcess() bool }); ok {
		r.idemInProcess = s.InProcess()
	}
	if r.idem != nil && !r.idemInProcess {
		r.tokens = sharedLedger{r.idem}
		r.once = r.tokens
	} else {
		// Two ledgers, so that filling one cannot lock the other out.
		r.tokens, r.once = &tokenLedger{}, &tokenLedger{}
	}
	r.chain = r.core
	for _, mw := range slices.Backward(opts.Middleware) {
		if mw != nil {
			r.chain = mw(r.chain)
		}
	}
	r.current.Store(&catalog{tools: map[string]*toolFamily{}, names: map[string]string{}})
	return r
}

// catalog is an immutable snapshot of the registry. A registration builds
// a new one and swaps it in, so readers never lock.
type catalog struct {
	tools map[string]*toolFamily // by "Toolkit.Tool"
	names map[string]string      // name → "Toolkit.Tool"
	list  []*registeredTool      // catalog order: by id, then version
	// revision counts the registrations and removals that built this
	// snapshot.
	revision uint64

	encodeOnce sync.Once
	encoded    []byte // the JSON array of all definitions, built on first use

	visOnce sync.Once
	vis     *visibilityIndex // built on first use

	defsOnce sync.Once
	defs     []*ToolDefinition // the definitions of list, for hook.Definitions
	// views holds the OTC catalogs of the callers who see only some of
	// the tools, by visibility key.
	views viewcache.Cache[[]byte]
}

// toolFamily is every registered version of one Toolkit.Tool.
type toolFamily struct {
	name     string
	versions []*registeredTool // ascending
}

// registeredTool is one tool version, with everything a call needs
// prepared at registration.
type registeredTool struct {
	key          string // "Toolkit.Tool"
	def          ToolDefinition
	encodedDef   []byte // def as JSON
	validator    *validate.Schema
	plan         *decode.Plan     // the input type's field names; nil when it has none
	defaults     []decode.Default // top-level defaults of an input without a struct plan
	inType       reflect.Type     // the function's input type
	requirements *Requirements
	needs        *callerNeeds // what the policy asks of the caller; nil for nothing
	invoke       invokeFunc
	// long says a run of the tool has taken longer than longRun: its
	// runs go on goroutines kept between runs (runLimited).
	long atomic.Bool

	// The tool's limits, with the registry's defaults applied: zero means
	// none.
	timeout       time.Duration
	maxConcurrent int64
	running       atomic.Int64 // calls of the function not yet returned
}

// invokeFunc decodes the validated input, runs the tool function and
// encodes its result (nil for a tool that returns nothing).
type invokeFunc func(ctx context.Context, input []byte) (json.RawMessage, error)

// inputError marks an input that passed the schema but could not be decoded
// into the function's input type. encodeError marks a result that cannot be
// encoded as JSON.
type (
	inputError  struct{ err error }
	encodeError struct{ err error }
)

func (e *inputError) Error() string  { return e.err.Error() }
func (e *encodeError) Error() string { return e.err.Error() }

// Register adds a tool version whose function takes In and returns Out. The
// input schema is reflected from In (a struct, a pointer to one, or a map
// with string keys) and the output schema from Out, once, here; the input
// validator is compiled here too. Return [NoOutput] for a tool that returns
// nothing.
//
// Register fails, naming the tool and the culprit, when the id, name,
// version or description is invalid, when the id and version are already
// registered or the name belongs to another tool, when fn is nil, when a
// type cannot be written as an inline schema (a recursive type, a channel,
// a func) or a top-level parameter has no description, when a jsonschema
// struct tag would be dropped or misread by the reflector (a misspelt
// keyword, a value of the wrong type, a comma inside a description),
// when a default is refused by its property's own schema or cannot be
// decoded into its field, and when the title is blank, the annotations
// contradict each other, an icon or a Meta key breaks MCP's rules (see
// [Tool]) or a Meta value cannot be encoded.
//
// An optional property left out of a call, or sent as null (see
// [RegistryOptions].StrictNulls), reaches fn with its schema's default,
// at any depth.
func Register[In, Out any](r *Registry, t Tool, fn func(context.Context, In) (Out, error)) error {
	if r == nil {
		return fmt.Errorf("otc: tool %s: Register called with a nil *Registry", toolLabel(t))
	}
	if fn == nil {
		return fmt.Errorf("otc: tool %s: the function is nil", toolLabel(t))
	}
	rt, hasOutput, err := prepareTool(t, reflect.TypeFor[In](), reflect.TypeFor[Out](), r.strictNulls)
	if err != nil {
		return err
	}
	dd := decode.NewDirect(reflect.TypeFor[In]())
	rt.invoke = func(ctx context.Context, input []byte) (json.RawMessage, error) {
		in, err := decode.Input[In](dd, input)
		if err != nil {
			return nil, &inputError{err}
		}
		out, err := fn(ctx, in)
		if err != nil || !hasOutput {
			return nil, err
		}
		if raw, ok := any(out).(json.RawMessage); ok && rawAsIs(raw) {
			return bytes.Clone(raw), nil // the function's own bytes stay its own
		}
		b, err := json.Marshal(out)
		if err != nil {
			return nil, &encodeError{err}
		}
		return b, nil
	}
	return r.add(rt)
}

// rawAsIs reports whether a function's json.RawMessage result can be
// taken as it is, without json.Marshal's copy: valid JSON in UTF-8 on one
// line (a result on the way to an MCP client over stdio must not break
// its line). Anything else goes through json.Marshal, which compacts it
// or refuses it.
func rawAsIs(raw json.RawMessage) bool {
	return len(raw) > 0 && bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 && jsonparse.Valid(raw)
}

// toolLabel names a tool in registration errors, even a malformed one.
func toolLabel(t Tool) string {
	return fmt.Sprintf("%q", wire.Truncate(t.ID+"@"+t.Version, maxToolIDLength))
}

// prepareTool checks a tool's description and builds its schemas and
// validator. hasOutput is false when the tool returns nothing.
func prepareTool(t Tool, in, out reflect.Type, strictNulls bool) (rt *registeredTool, hasOutput bool, err error) {
	fail := func(format string, args ...any) (*registeredTool, bool, error) {
		return nil, false, fmt.Errorf("otc: tool %s: %s", toolLabel(t), fmt.Sprintf(format, args...))
	}
	switch {
	case strings.Contains(t.ID, "@"):
		return fail("ID must not include the version; put it in Tool.Version")
	case !isToolKey(t.ID):
		return fail("ID %q is invalid: it must be Toolkit.Tool, each part of letters, digits and underscores", t.ID)
	case !isVersion(t.Version):
		return fail("Version %q is invalid: it must be x.y.z with integers (no leading zeros, no \"v\", no pre-release or build suffix)", t.Version)
	case len(t.ID)+1+len(t.Version) > maxToolIDLength:
		return fail("ID and version together are longer than %d bytes", maxToolIDLength)
	case strings.TrimSpace(t.Description) == "":
		return fail("Description is required: it tells a model when and how to use the tool")
	}
	name := t.Name
	if name == "" {
		name = strings.ReplaceAll(t.ID, ".", "_")
	}
	if !isToolName(name) {
		return fail("Name %q is invalid: it must be 1 to 64 letters, digits, underscores or dashes", name)
	}
	if problem := requirementsProblem(t.Requirements); problem != "" {
		return fail("Requirements: %s", problem)
	}
	if problem := policyProblem(t.Policy); problem != "" {
		return fail("Policy: %s", problem)
	}
	if t.Tasks > TasksRequired {
		return fail("Tasks is %d, which is not one of TasksForbidden, TasksOptional and TasksRequired", t.Tasks)
	}
	switch {
	case t.AskBeforeTask < 0:
		return fail("AskBeforeTask is %s; it is a duration, zero for none", t.AskBeforeTask)
	case t.AskBeforeTask > 0 && t.Tasks == TasksForbidden:
		return fail("AskBeforeTask is set but Tasks is TasksForbidden: it applies to a tool whose calls may run as tasks")
	}
	annotations, icons, meta, problem := toolMetadata(t)
	if problem != "" {
		return fail("%s", problem)
	}

	params, fullParams, validator, err := inputSchema(t, in, strictNulls)
	if err != nil {
		return fail("%v", err)
	}
	output, fullOutput, err := outputSchema(t, out)
	if err != nil {
		return fail("%v", err)
	}

	def := ToolDefinition{
		ID:           t.ID + "@" + t.Version,
		Name:         name,
		Description:  t.Description,
		Version:      t.Version,
		InputSchema:  InputSchema{Parameters: params},
		OutputSchema: output,
		Requirements: cloneRequirements(t.Requirements),
		Content:      out == contentType,
		Policy:       clonePolicy(t.Policy),

		FullInputSchema:  fullParams,
		FullOutputSchema: fullOutput,

		Title:       t.Title,
		Annotations: annotations,
		Icons:       icons,
		Meta:        meta,
		Tasks:       t.Tasks,

		AskBeforeTask: t.AskBeforeTask,
	}
	encoded, err := json.Marshal(def)
	if err != nil {
		return fail("cannot encode the definition: %v", err)
	}
	plan := decode.NewPlan(in)
	defaults, err := decode.Defaults(params, in, plan, strictNulls)
	if err != nil {
		return fail("%v", err)
	}
	return &registeredTool{
		key:           t.ID,
		def:           def,
		encodedDef:    encoded,
		validator:     validator,
		plan:          plan,
		defaults:      defaults,
		inType:        in,
		requirements:  def.Requirements,
		needs:         needsOf(def.Policy, def.ID),
		timeout:       t.Timeout,
		maxConcurrent: int64(t.MaxConcurrent),
	}, output != nil, nil
}

// inputSchema builds the parameters schema of a tool and compiles its
// validator, from the hand-written schema when there is one. full is the
// hand-written schema as given when its references had to be inlined, and
// nil otherwise.
func inputSchema(t Tool, in reflect.Type, strictNulls bool) (params, full json.RawMessage, validator *validate.Schema, err error) {
	base := in
	for base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	decodable := base.Kind() == reflect.Struct || base.Kind() == reflect.Map && base.Key().Kind() == reflect.String
	var raw, lenient json.RawMessage
	if t.InputSchema != nil {
		if !decodable && in != rawMessageType && in.Kind() != reflect.Interface {
			return nil, nil, nil, fmt.Errorf("input type %s cannot hold a JSON object: use a struct, a map with string keys, json.RawMessage or any", in)
		}
		compact, err := compactJSON(t.InputSchema)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("InputSchema is not valid JSON: %v", err)
		}
		inlined, err := inline.Schema(compact)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("InputSchema %v", err)
		}
		raw = compact
		if inlined != nil {
			raw, full = inlined, compact
		}
	} else {
		if !decodable {
			return nil, nil, nil, fmt.Errorf("input type %s must be a struct, a pointer to a struct, or a map with string keys", in)
		}
		reflected, err := reflectInputSchema(in, false)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("input type: %v", err)
		}
		raw = reflected
		if !strictNulls {
			// Published plain, so that every converter keeps an optional
			// field's type and rules; validated leniently, so that null
			// still stands for an absent optional field.
			if lenient, err = reflectInputSchema(in, true); err != nil {
				return nil, nil, nil, fmt.Errorf("input type: %v", err)
			}
		}
	}

	what := "input schema"
	if t.InputSchema != nil {
		what = "InputSchema"
	}
	doc, err := inline.Check(raw)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s %v", what, err)
	}
	undescribed, err := checkParameters(doc)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s %v", what, err)
	}
	if undescribed != "" {
		if field := goFieldName(in, undescribed); field != "" && t.InputSchema == nil {
			return nil, nil, nil, fmt.Errorf("input parameter %q (field %s) has no description: add one with a jsonschema:\"description=...\" tag", undescribed, field)
		}
		return nil, nil, nil, fmt.Errorf("input parameter %q has no description", undescribed)
	}
	if lenient == nil {
		lenient = raw
	}
	validator, err = validate.Compile(lenient)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s %v", what, err)
	}
	return raw, full, validator, nil
}

// outputSchema builds the output schema of a tool: nil (JSON null) when it
// returns nothing. full is as for inputSchema.
func outputSchema(t Tool, out reflect.Type) (schema, full json.RawMessage, err error) {
	if t.OutputSchema != nil {
		compact, err := compactJSON(t.OutputSchema)
		if err != nil {
			return nil, nil, fmt.Errorf("OutputSchema is not valid JSON: %v", err)
		}
		if string(compact) == "null" {
			return nil, nil, nil
		}
		inlined, err := inline.Schema(compact)
		if err != nil {
			return nil, nil, fmt.Errorf("OutputSchema %v", err)
		}
		schema = compact
		if inlined != nil {
			schema, full = inlined, compact
		}
		if _, err := inline.Check(schema); err != nil {
			return nil, nil, fmt.Errorf("OutputSchema %v", err)
		}
		if _, err := validate.Compile(schema); err != nil {
			return nil, nil, fmt.Errorf("OutputSchema %v", err)
		}
		return schema, full, nil
	}
	switch {
	case out == noOutputType:
		return nil, nil, nil
	case out.Kind() == reflect.Interface:
		return anySchema, nil, nil
	}
	s, err := reflectSchema(out, t.OutputDescription)
	if err != nil {
		return nil, nil, fmt.Errorf("output type: %v", err)
	}
	if _, err := inline.Check(s); err != nil {
		return nil, nil, fmt.Errorf("output schema %v", err)
	}
	return s, nil, nil
}

// isToolName reports whether s matches ^[A-Za-z0-9_-]{1,64}$.
func isToolName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '-' && !isIdentPart(s[i:i+1]) {
			return false
		}
	}
	return true
}

// requirementsProblem describes what makes req impossible for a caller to
// satisfy, or returns "" when nothing does.
func requirementsProblem(req *Requirements) string {
	if req == nil {
		return ""
	}
	seen := map[string]bool{}
	for i, a := range req.Authorization {
		if a.ID == "" {
			return fmt.Sprintf("Authorization[%d] has an empty ID", i)
		}
		if seen["a:"+a.ID] {
			return fmt.Sprintf("authorization %q is listed twice", a.ID)
		}
		seen["a:"+a.ID] = true
	}
	for i, s := range req.Secrets {
		if s.ID == "" {
			return fmt.Sprintf("Secrets[%d] has an empty ID", i)
		}
		if seen["s:"+s.ID] {
			return fmt.Sprintf("secret %q is listed twice", s.ID)
		}
		seen["s:"+s.ID] = true
	}
	return ""
}

// cloneRequirements copies req so that the caller's later changes do not
// reach the registry. Empty requirements become nil.
func cloneRequirements(req *Requirements) *Requirements {
	if req == nil || len(req.Authorization) == 0 && len(req.Secrets) == 0 && !req.UserID {
		return nil
	}
	c := &Requirements{UserID: req.UserID, Secrets: slices.Clone(req.Secrets)}
	for _, a := range req.Authorization {
		if a.OAuth2 != nil {
			a.OAuth2 = &OAuth2Requirement{Scopes: slices.Clone(a.OAuth2.Scopes)}
		}
		c.Authorization = append(c.Authorization, a)
	}
	return c
}

// add publishes a prepared tool in a new catalog snapshot.
func (r *Registry) add(rt *registeredTool) error {
	switch {
	case rt.timeout == 0:
		rt.timeout = r.timeout
	case rt.timeout < 0:
		rt.timeout = 0
	}
	switch {
	case rt.maxConcurrent == 0:
		rt.maxConcurrent = int64(r.maxConcurrent)
	case rt.maxConcurrent < 0:
		rt.maxConcurrent = 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.current.Load()
	id := rt.def.ID
	if fam := old.tools[rt.key]; fam != nil {
		if fam.name != rt.def.Name {
			return fmt.Errorf("otc: tool %q: name %q differs from %q, the name of its other versions", id, rt.def.Name, fam.name)
		}
		for _, v := range fam.versions {
			if v.def.Version == rt.def.Version {
				return fmt.Errorf("otc: tool %q is already registered", id)
			}
		}
	}
	if key, taken := old.names[rt.def.Name]; taken && key != rt.key {
		return fmt.Errorf("otc: tool %q: name %q is already used by %s", id, rt.def.Name, key)
	}

	next := &catalog{
		tools:    make(map[string]*toolFamily, len(old.tools)+1),
		names:    make(map[string]string, len(old.names)+1),
		revision: old.revision + 1,
	}
	for k, v := range old.tools {
		next.tools[k] = v
	}
	for k, v := range old.names {
		next.names[k] = v
	}
	fam := &toolFamily{name: rt.def.Name}
	if prev := old.tools[rt.key]; prev != nil {
		fam.versions = slices.Clone(prev.versions)
	}
	fam.versions = append(fam.versions, rt)
	slices.SortFunc(fam.versions, func(a, b *registeredTool) int {
		return compareVersions(a.def.Version, b.def.Version)
	})
	next.tools[rt.key] = fam
	next.names[rt.def.Name] = rt.key

	i, _ := slices.BinarySearchFunc(old.list, rt, catalogOrder)
	next.list = slices.Insert(slices.Clone(old.list), i, rt)
	r.current.Store(next)
	r.changed()
	return nil
}

// Remove takes tools out of the registry: every version of each tool id
// ("Toolkit.Tool"), in one new catalog snapshot, so that a listing sees
// all of them or none of them gone. An id that is not registered is
// ignored. It returns how many tool versions it removed.
//
// Calls already running finish as they were; a call that begins after
// Remove returns is answered as for an unknown tool, and every catalog
// (each wire format's, each caller's) is rebuilt without them, as after a
// registration. A removed tool may be registered again, with another
// schema if need be.
func (r *Registry) Remove(toolIDs ...string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.current.Load()
	gone := map[string]bool{}
	for _, id := range toolIDs {
		if _, ok := old.tools[id]; ok {
			gone[id] = true
		}
	}
	if len(gone) == 0 {
		return 0
	}
	next := &catalog{
		tools:    make(map[string]*toolFamily, len(old.tools)),
		names:    make(map[string]string, len(old.names)),
		list:     make([]*registeredTool, 0, len(old.list)),
		revision: old.revision + 1,
	}
	for k, v := range old.tools {
		if !gone[k] {
			next.tools[k] = v
		}
	}
	for k, v := range old.names {
		if !gone[v] {
			next.names[k] = v
		}
	}
	n := 0
	for _, t := range old.list {
		if gone[t.key] {
			n++
			continue
		}
		next.list = append(next.list, t)
	}
	r.current.Store(next)
	r.changed()
	return n
}

// catalogOrder sorts the catalog by tool id, then by version, as the protocol's List Tools orders it.
func catalogOrder(a, b *registeredTool) int {
	if c := strings.Compare(a.key, b.key); c != 0 {
		return c
	}
	return compareVersions(a.def.Version, b.def.Version)
}

// Tools returns the definitions of every registered tool version, in
// catalog order (by id, then version). The result is the caller's to keep.
func (r *Registry) Tools() []ToolDefinition {
	list := r.current.Load().list
	defs := make([]ToolDefinition, len(list))
	for i, t := range list {
		defs[i] = t.def
		defs[i].InputSchema.Parameters = bytes.Clone(t.def.InputSchema.Parameters)
		defs[i].OutputSchema = bytes.Clone(t.def.OutputSchema)
		defs[i].FullInputSchema = bytes.Clone(t.def.FullInputSchema)
		defs[i].FullOutputSchema = bytes.Clone(t.def.FullOutputSchema)
		defs[i].Requirements = cloneRequirements(t.def.Requirements)
		defs[i].Policy = clonePolicy(t.def.Policy)
		defs[i].Annotations = cloneAnnotations(t.def.Annotations)
		defs[i].Icons = cloneIcons(t.def.Icons)
		defs[i].Meta = bytes.Clone(t.def.Meta)
	}
	return defs
}

// Revision counts the changes to the catalog so far (registrations and
// removals). It changes exactly when the catalog does, so that an adapter may cache what it builds from
// [Registry.Tools] and rebuild it when the revision moves on.
func (r *Registry) Revision() uint64 { return r.current.Load().revision }

// Lookup resolves a tool id as a call through protocol would
// ([CallRequest.ToolID]): "Toolkit.Tool" is the highest version protocol
// may call, "Toolkit.Tool@1" the highest 1.x.y, "Toolkit.Tool@1.0.0" that
// version. It returns the definition of that version, or the error the
// call would fail with: an [*Error] wrapping [ErrToolNotFound], or one
// for a malformed id. Adapters of other wire formats use it to describe a
// tool, or to refuse an unknown one before reading a request's body.
// Whether the tool's [Policy] lets protocol call it is not checked. The
// definition is shared with the catalog and must not be modified.
func (r *Registry) Lookup(toolID, protocol string) (*ToolDefinition, error) {
	t, err := r.resolveFor(toolID, protocol)
	if err != nil {
		return nil, err
	}
	return &t.def, nil
}

// LookupName is [Registry.Lookup] for a tool named as a model sees it,
// with an optional version ([CallRequest.ToolName]): "Calculator_Add",
// "Calculator_Add@1", "Calculator_Add@1.0.0".
func (r *Registry) LookupName(name, protocol string) (*ToolDefinition, error) {
	t, err := r.resolveNameFor(name, protocol)
	if err != nil {
		return nil, err
	}
	return &t.def, nil
}

// Logger returns the logger the registry reports to
// ([RegistryOptions.Logger], or slog.Default()), which the handlers of
// every wire format use for their own faults unless given another.
func (r *Registry) Logger() *slog.Logger { return r.logger }

// encodedCatalog returns the catalog as a JSON array of definitions. It is
// built once per snapshot, from definitions encoded at registration, so
// listing tools costs one write.
func (c *catalog) encodedCatalog() []byte {
	c.encodeOnce.Do(func() {
		n := 2
		for _, t := range c.list {
			n += len(t.encodedDef) + 1
		}
		buf := make([]byte, 0, n)
		buf = append(buf, '[')
		for _, t := range c.list {
			if !t.def.Policy.AllowsProtocol(ProtocolOTC) {
				continue // its policy keeps it off OTC, catalog included
			}
			if len(buf) > 1 {
				buf = append(buf, ',')
			}
			buf = append(buf, t.encodedDef...)
		}
		c.encoded = append(buf, ']')
	})
	return c.encoded
}

// encodedCatalogFor returns the OTC catalog a caller with visibility v
// sees: the whole catalog when v's key is "", otherwise one encoded for
// v's key, once per snapshot and key.
func (c *catalog) encodedCatalogFor(v Visibility) []byte {
	if v.key == "" {
		return c.encodedCatalog()
	}
	return c.views.Get(c.revision, v.key, func() []byte {
		n := 2
		for _, t := range c.list {
			n += len(t.encodedDef) + 1
		}
		buf := make([]byte, 0, n)
		buf = append(buf, '[')
		tools := c.visibility().tools
		for _, t := range c.list {
			if !v.sees(tools[t.def.ID]) { // v.protocol is OTC: its policy's protocols are checked too
				continue
			}
			if len(buf) > 1 {
				buf = append(buf, ',')
			}
			buf = append(buf, t.encodedDef...)
		}
		return append(buf, ']')
	})
}

// resolve finds the tool version a tool id names (the protocol's Tool Version Resolution).
func (r *Registry) resolve(toolID string) (*registeredTool, error) {
	return r.resolveFor(toolID, "")
}

// resolveFor resolves a tool id for a call through protocol: without a
// version, the highest version that protocol may call (the one its
// catalog lists), or the highest when none may.
func (r *Registry) resolveFor(toolID, protocol string) (*registeredTool, error) {
	key, version, ok := parseToolID(toolID)
	cat := r.current.Load()
	if !ok {
		dev := "tool_id must be Toolkit.Tool, Toolkit.Tool@x or Toolkit.Tool@x.y.z: letters, digits and underscores in Toolkit and Tool, integers without leading zeros in the version"
		if key, isName := cat.names[toolID]; isName {
			dev = fmt.Sprintf("%q is the name of tool %s; tool_id takes the id", toolID, key)
		}
		return nil, badRequest(fmt.Sprintf("Tool ID '%s' is malformed", wire.Truncate(toolID, 80)), dev)
	}
	fam := cat.tools[key]
	if fam == nil {
		return nil, notFound(strings.ReplaceAll(key, ".", "_"), key+" is not registered")
	}
	if version == "" {
		if t := latestAllowed(fam, protocol); t != nil && protocol != "" {
			return t, nil
		}
		return fam.versions[len(fam.versions)-1], nil
	}
	for _, t := range fam.versions {
		if t.def.Version == version {
			return t, nil
		}
	}
	return nil, notFound(fam.name, fmt.Sprintf("%s version %s is not available", key, version))
}

// notFound is the error for a call of a tool the registry does not hold,
// or that its caller may not see: named as the call named it.
func notFound(named, developer string) *Error {
	return &Error{Code: CodeServerError, Message: fmt.Sprintf("Tool '%s' was not found", named), DeveloperMessage: developer, cause: ErrToolNotFound}
}

// withSuggestions adds to a not-found error the names nearest to the one
// the caller named (a misspelling, or an upstream's spelling a gateway
// folded), among the tools it may see through protocol: "did you mean".
// Ids are suggested for an id, names for a name.
func (r *Registry) withSuggestions(err error, named string, id *Identity, protocol string) error {
	e, ok := errors.AsType[*Error](err)
	if !ok || named == "" {
		return err
	}
	cat := r.current.Load()
	vis := r.visibilityIn(cat, id, protocol)
	base, _, _ := strings.Cut(named, "@")
	byID := strings.Contains(base, ".")
	near := nearest.Names(base, 3, func(yield func(string) bool) {
		last := ""
		for _, t := range cat.list { // a tool's versions side by side: each name once
			c := t.def.Name
			if byID {
				c = t.key
			}
			if c == last || !vis.Sees(t.def.ID) {
				continue
			}
			last = c
			if !yield(c) {
				return
			}
		}
	})
	if len(near) == 0 {
		return err
	}
	cp := *e
	cp.Message = e.Message + " (did you mean '" + strings.Join(near, "' or '") + "'?)"
	return &cp
}

// unknownTo is the error of req's call of a tool the registry does not
// hold, word for word: what a caller that may not see a tool is told.
func unknownTo(req *CallRequest) *Error {
	if req.ToolID == "" {
		name, _, _ := strings.Cut(req.ToolName, "@")
		return notFound(wire.Truncate(name, 80), "no tool has that name")
	}
	key, _, _ := strings.Cut(req.ToolID, "@")
	return notFound(strings.ReplaceAll(key, ".", "_"), key+" is not registered")
}

// resolveNameFor finds a tool version by the name a model sees, with an
// optional version as in a tool id: "Calculator_Add", "Calculator_Add@1",
// "Calculator_Add@1.0.0". Adapters that address tools by name use it.
// Without a version it resolves as resolveFor does, for protocol.
func (r *Registry) resolveNameFor(nameAndVersion, protocol string) (*registeredTool, error) {
	name, version, hasVersion := strings.Cut(nameAndVersion, "@")
	key, ok := r.current.Load().names[name]
	if !ok {
		return nil, notFound(wire.Truncate(name, 80), "no tool has that name")
	}
	if hasVersion {
		// Checked here so that the message names what the caller sent,
		// not the Toolkit.Tool id that resolve would quote.
		if !isNumber(version) && !isVersion(version) {
			return nil, badRequest(fmt.Sprintf("Version '%s' of tool '%s' is malformed", wire.Truncate(version, 40), name),
				"the version after @ must be x or x.y.z: integers without leading zeros")
		}
		key += "@" + version
	}
	return r.resolveFor(key, protocol)
}
