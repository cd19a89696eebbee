package a2a

import (
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"regexp"
	"strings"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/netguard"
	"github.com/otcgo/otc/internal/wire"
	"github.com/otcgo/otc/tasks"
)

// This file serves push notification configurations: a caller gives a
// task a webhook (the four configuration methods, or a message's
// configuration), which the task store keeps with the task
// (tasks.WebhookStore), and each change of the task's state is posted to
// it (pushsend.go).

// PushOptions configures push notifications ([Options.Push]). The zero
// value gives the defaults described on each field.
type PushOptions struct {
	// AllowedNetworks lists the networks a webhook may be in although
	// they are not public. Nil means none: a webhook on a loopback,
	// private, link-local, shared (100.64.0.0/10) or reserved address,
	// or a cloud metadata address, in any of its forms (an IPv4 address
	// written as IPv6, a NAT64 or 6to4 address carrying one), or a DNS
	// name resolving to one, is refused when it is given, and each
	// connection is checked again as it is made.
	AllowedNetworks []netip.Prefix
	// SigningKey, when set, signs each delivery that carries no
	// credentials of its own configuration with a JWT in its
	// Authorization header (Bearer), whose public key the handler
	// publishes at /.well-known/jwks.json below it: an *ecdsa.PrivateKey
	// on P-256 (ES256) or P-384 (ES384), an ed25519.PrivateKey (EdDSA) or
	// an *rsa.PrivateKey (RS256). The token's issuer (iss) is
	// [Options.URL], which signing requires: a caller never chooses what
	// the agent signs. Replicas share one key. NewHandler panics on a key
	// of another kind, and on a key without Options.URL. Nil means
	// deliveries carry only the configuration's token and authentication.
	SigningKey crypto.Signer
	// MaxPerTask caps the configurations of one task. Zero or less
	// means DefaultMaxPushPerTask. The task store caps those of one
	// caller across its tasks (tasks.MemoryStoreOptions and the Redis
	// store's MaxWebhooksPerOwner, 100 by default), however many are
	// made at once.
	MaxPerTask int
	// Attempts is how many times a delivery is tried, with exponential
	// backoff between tries (from half a second, at most 30 seconds, or
	// the webhook's Retry-After when shorter), before it is dropped with
	// a log line. Zero or less means DefaultPushAttempts.
	Attempts int
	// Timeout bounds each try. Zero or less means DefaultPushTimeout.
	Timeout time.Duration
	// MaxPending caps the webhooks with deliveries waiting or under way:
	// past it a new delivery is dropped, with a log line. One caller's
	// webhooks, and one webhook host's, take a tenth of it at most, so
	// that a few callers' slow webhooks cannot take the others' place.
	// Zero or less means DefaultMaxPushPending.
	MaxPending int
	// MaxInFlight caps the posts under way at once (the others wait
	// their turn), an eighth of them at most to one webhook host. Each
	// costs little memory: its answer's headers are read up to 16 KiB,
	// its body up to 4 KiB. Zero or less means DefaultMaxPushInFlight.
	MaxInFlight int

	// lookup, when set, resolves webhook hosts (tests).
	lookup func(context.Context, string) ([]netip.Addr, error)
}

// Defaults of [PushOptions].
const (
	DefaultMaxPushPerTask  = 10
	DefaultPushAttempts    = 5
	DefaultPushTimeout     = 10 * time.Second
	DefaultMaxPushPending  = 1000
	DefaultMaxPushInFlight = 64
)

// Bounds of a push notification configuration.
const (
	maxPushToken       = 1024
	maxPushCredentials = 4096
	maxPushID          = 128
)

// pushConfig is a push notification configuration as the task store
// keeps it (tasks.Webhook.Config).
type pushConfig struct {
	ID          string `json:"id"`
	URL         string `json:"url"`
	Token       string `json:"token,omitempty"`
	Scheme      string `json:"scheme,omitempty"`
	Credentials string `json:"credentials,omitempty"`
	// V03 says the configuration was made in 0.3, whose payload is the
	// task itself, not a StreamResponse.
	V03 bool `json:"v03,omitempty"`
}

// schemeToken is an HTTP authentication scheme's name (RFC 9110's token).
var schemeToken = regexp.MustCompile("^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$")

// readPushConfig reads the push notification configuration at node n of
// d, naming its fields after prefix in errors: 1.0's shape (id, url,
// token, authentication {scheme, credentials}), or 0.3's (authentication
// {schemes: [...], credentials}).
func readPushConfig(d *jsonparse.Document, n int32, prefix string) (pushConfig, *rpcError) {
	var c pushConfig
	if n < 0 || d.Kind(n) != jsonparse.KindObject {
		return c, invalidParams(strings.TrimSuffix(prefix, "."), "required: a push notification configuration, an object with a url")
	}
	str := func(name string, into *string, max int) *rpcError {
		v := d.Member(n, name)
		if v < 0 || d.Kind(v) == jsonparse.KindNull {
			return nil
		}
		if d.Kind(v) != jsonparse.KindString {
			return invalidParams(prefix+name, "must be a string")
		}
		s := d.StringValue(v)
		if len(s) > max {
			return invalidParams(prefix+name, fmt.Sprintf("at most %d bytes", max))
		}
		*into = s
		return nil
	}
	for _, f := range []struct {
		name string
		into *string
		max  int
	}{{"id", &c.ID, maxPushID}, {"url", &c.URL, netguard.MaxURL}, {"token", &c.Token, maxPushToken}} {
		if e := str(f.name, f.into, f.max); e != nil {
			return c, e
		}
	}
	switch {
	case c.URL == "":
		return c, invalidParams(prefix+"url", "required: the webhook's URL")
	case strings.ContainsFunc(c.ID, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '/' }):
		return c, invalidParams(prefix+"id", "must not hold control characters or /")
	case strings.ContainsFunc(c.Token, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return c, invalidParams(prefix+"token", "must not hold control characters")
	}
	a := d.Member(n, "authentication")
	if a < 0 || d.Kind(a) == jsonparse.KindNull {
		return c, nil
	}
	if d.Kind(a) != jsonparse.KindObject {
		return c, invalidParams(prefix+"authentication", "must be an object {scheme, credentials}")
	}
	if v := d.Member(a, "scheme"); v >= 0 && d.Kind(v) == jsonparse.KindString {
		c.Scheme = d.StringValue(v)
	} else if v := d.Member(a, "schemes"); v >= 0 && d.Kind(v) == jsonparse.KindArray { // 0.3
		for _, s := range d.Elements(v) {
			if d.Kind(s) == jsonparse.KindString {
				c.Scheme = d.StringValue(s)
				break
			}
		}
	}
	if v := d.Member(a, "credentials"); v >= 0 && d.Kind(v) == jsonparse.KindString {
		c.Credentials = d.StringValue(v)
	}
	switch {
	case !schemeToken.MatchString(c.Scheme):
		return c, invalidParams(prefix+"authentication.scheme", "required: an HTTP authentication scheme, such as Bearer or Basic")
	case len(c.Credentials) > maxPushCredentials:
		return c, invalidParams(prefix+"authentication.credentials", fmt.Sprintf("at most %d bytes", maxPushCredentials))
	case strings.ContainsFunc(c.Credentials, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return c, invalidParams(prefix+"authentication.credentials", "must not hold control characters")
	}
	return c, nil
}

// checkPush checks a configuration's webhook (see PushOptions), names it
// when the caller did not, and notes the version it was made in and the
// agent's URL.
func (h *Handler) checkPush(r *http.Request, d dialect, c *pushConfig, prefix string) *rpcError {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	if _, err := h.push.guard.CheckURL(ctx, c.URL); err != nil {
		return invalidParams(prefix+"url", "refused: "+err.Error()+"; this agent posts only to public http(s) addresses")
	}
	if c.Credentials == "" && h.push.signer == nil && c.Scheme != "" {
		return invalidParams(prefix+"authentication.credentials", "required: this agent signs no JWTs of its own, so the scheme needs credentials to send")
	}
	if c.ID == "" {
		c.ID = otc.NewCallID()
	}
	c.V03 = d == v03
	return nil
}

// messagePush is the webhook a message's configuration gives its task.
func (h *Handler) messagePush(r *http.Request, d dialect, m incoming) (tasks.Webhook, *rpcError) {
	if h.push == nil {
		return tasks.Webhook{}, pushUnsupported
	}
	prefix := m.pushField + "."
	c, e := readPushConfig(m.doc, m.push, prefix)
	if e == nil {
		e = h.checkPush(r, d, &c, prefix)
	}
	if e != nil {
		return tasks.Webhook{}, e
	}
	raw, _ := json.Marshal(c)
	return tasks.Webhook{ID: c.ID, Config: raw}, nil
}

// pushUnsupported answers the push methods of a handler without push
// notifications.
var pushUnsupported = &rpcError{Code: codePushNotSupported, Message: "Push notifications are not supported by this agent", Data: errorInfo("PUSH_NOTIFICATION_NOT_SUPPORTED", nil)}

// setPush keeps configuration c of task taskID, the caller's.
func (h *Handler) setPush(r *http.Request, taskID string, c pushConfig) *rpcError {
	ctx := r.Context()
	store := h.runner.Store().(tasks.WebhookStore) // h.push is set only for one
	st, e := h.ownTask(r, taskID)
	if e != nil {
		return e
	}
	raw, _ := json.Marshal(c)
	err := store.SetWebhook(ctx, st.ID, tasks.Webhook{ID: c.ID, Config: raw}, h.push.maxPerTask)
	switch {
	case errors.Is(err, tasks.ErrTooManyWebhooks):
		return invalidParams("taskId", fmt.Sprintf("the task has %d push notification configurations, as many as it may: delete one first", h.push.maxPerTask))
	case errors.Is(err, tasks.ErrTooManyOwnerWebhooks):
		return invalidParams("taskId", "you have as many push notification configurations across your tasks as this agent keeps for one caller: delete one first")
	case errors.Is(err, tasks.ErrNotFound):
		return &rpcError{Code: codeTaskNotFound, Message: "Task not found: no task " + quoteID(taskID) + " of yours is kept here", Data: errorInfo("TASK_NOT_FOUND", nil)}
	case err != nil:
		h.logger.ErrorContext(ctx, "a2a: the task store failed to keep a push notification configuration", slog.String("task", st.ID), slog.String("error", err.Error()))
		return &rpcError{Code: codeInternalError, Message: "Internal error: the task store failed; try again"}
	}
	return nil
}

// pushConfigs are the configurations of task taskID, the caller's.
func (h *Handler) pushConfigs(r *http.Request, taskID string) ([]pushConfig, *rpcError) {
	st, e := h.ownTask(r, taskID)
	if e != nil {
		return nil, e
	}
	out := make([]pushConfig, 0, len(st.Webhooks))
	for _, w := range st.Webhooks {
		var c pushConfig
		if json.Unmarshal(w.Config, &c) == nil {
			out = append(out, c)
		}
	}
	return out, nil
}

// getPush is configuration id of task taskID (the first, for an empty id).
func (h *Handler) getPush(r *http.Request, taskID, id string) (pushConfig, *rpcError) {
	all, e := h.pushConfigs(r, taskID)
	if e != nil {
		return pushConfig{}, e
	}
	for _, c := range all {
		if c.ID == id || id == "" {
			return c, nil
		}
	}
	return pushConfig{}, &rpcError{Code: codeTaskNotFound, Message: "Push notification configuration not found: the task " + quoteID(taskID) + " has none named " + quoteID(id), Data: errorInfo("TASK_NOT_FOUND", nil)}
}

// deletePush deletes configuration id of task taskID; deleting one that
// does not exist is no error.
func (h *Handler) deletePush(r *http.Request, taskID, id string) *rpcError {
	st, e := h.ownTask(r, taskID)
	if e != nil {
		return e
	}
	err := h.runner.Store().(tasks.WebhookStore).DeleteWebhook(r.Context(), st.ID, id)
	if err != nil && !errors.Is(err, tasks.ErrNotFound) {
		h.logger.ErrorContext(r.Context(), "a2a: the task store failed to delete a push notification configuration", slog.String("task", st.ID), slog.String("error", err.Error()))
		return &rpcError{Code: codeInternalError, Message: "Internal error: the task store failed; try again"}
	}
	return nil
}

// appendPushConfig appends configuration c of task taskID in d's shape:
// 1.0's TaskPushNotificationConfig, or 0.3's, which nests the
// configuration.
func appendPushConfig(dst []byte, d dialect, taskID string, c pushConfig) []byte {
	dst = append(dst, `{"taskId":`...)
	dst = wire.AppendString(dst, taskID)
	if d == v03 {
		dst = append(dst, `,"pushNotificationConfig":{`...)
	} else {
		dst = append(dst, ',')
	}
	dst = append(dst, `"id":`...)
	dst = wire.AppendString(dst, c.ID)
	dst = append(dst, `,"url":`...)
	dst = wire.AppendString(dst, c.URL)
	if c.Token != "" {
		dst = append(dst, `,"token":`...)
		dst = wire.AppendString(dst, c.Token)
	}
	if c.Scheme != "" {
		if d == v03 {
			dst = append(dst, `,"authentication":{"schemes":[`...)
			dst = wire.AppendString(dst, c.Scheme)
			dst = append(dst, ']')
		} else {
			dst = append(dst, `,"authentication":{"scheme":`...)
			dst = wire.AppendString(dst, c.Scheme)
		}
		if c.Credentials != "" {
			dst = append(dst, `,"credentials":`...)
			dst = wire.AppendString(dst, c.Credentials)
		}
		dst = append(dst, '}')
	}
	if d == v03 {
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// pushParams reads the task id and configuration id of the get and
// delete methods: 1.0's {taskId, id}, 0.3's {id, pushNotificationConfigId}.
func pushParams(c *rpcCall) (taskID, id string, e *rpcError) {
	d, p := c.doc, c.params
	if p < 0 || d.Kind(p) != jsonparse.KindObject {
		return "", "", invalidParams("params", "required: an object naming the task")
	}
	str := func(name string) string {
		if v := d.Member(p, name); v >= 0 && d.Kind(v) == jsonparse.KindString {
			return d.StringValue(v)
		}
		return ""
	}
	if c.d == v03 {
		taskID, id = str("id"), str("pushNotificationConfigId")
		if taskID == "" {
			return "", "", invalidParams("id", "required: the task's id")
		}
		return taskID, id, nil
	}
	taskID, id = str("taskId"), str("id")
	if taskID == "" {
		return "", "", invalidParams("taskId", "required: the task's id")
	}
	return taskID, id, nil
}

// pushSetMethod answers CreateTaskPushNotificationConfig (0.3:
// tasks/pushNotificationConfig/set).
func pushSetMethod(h *Handler, c *rpcCall) (any, *rpcError, bool) {
	if h.push == nil {
		return nil, pushUnsupported, false
	}
	d, p := c.doc, c.params
	if p < 0 || d.Kind(p) != jsonparse.KindObject {
		return nil, invalidParams("params", "required: a TaskPushNotificationConfig"), false
	}
	var taskID string
	if v := d.Member(p, "taskId"); v >= 0 && d.Kind(v) == jsonparse.KindString {
		taskID = d.StringValue(v)
	}
	if taskID == "" {
		return nil, invalidParams("taskId", "required: the task's id"), false
	}
	node, prefix := p, ""
	if c.d == v03 {
		node, prefix = d.Member(p, "pushNotificationConfig"), "pushNotificationConfig."
	}
	cfg, e := readPushConfig(d, node, prefix)
	if e == nil {
		e = h.checkPush(c.r, c.d, &cfg, prefix)
	}
	if e == nil {
		e = h.setPush(c.r, taskID, cfg)
	}
	if e != nil {
		return nil, e, false
	}
	return json.RawMessage(appendPushConfig(nil, c.d, taskID, cfg)), nil, false
}

// pushGetMethod answers GetTaskPushNotificationConfig (0.3:
// tasks/pushNotificationConfig/get, whose configuration id is optional).
func pushGetMethod(h *Handler, c *rpcCall) (any, *rpcError, bool) {
	if h.push == nil {
		return nil, pushUnsupported, false
	}
	taskID, id, e := pushParams(c)
	if e == nil && id == "" && c.d == v10 {
		e = invalidParams("id", "required: the configuration's id")
	}
	if e != nil {
		return nil, e, false
	}
	cfg, e := h.getPush(c.r, taskID, id)
	if e != nil {
		return nil, e, false
	}
	return json.RawMessage(appendPushConfig(nil, c.d, taskID, cfg)), nil, false
}

// pushListMethod answers ListTaskPushNotificationConfigs (0.3:
// tasks/pushNotificationConfig/list, answered with the array itself).
// A task has few configurations: they fit on one page.
func pushListMethod(h *Handler, c *rpcCall) (any, *rpcError, bool) {
	if h.push == nil {
		return nil, pushUnsupported, false
	}
	taskID, _, e := pushParams(c)
	if e != nil {
		return nil, e, false
	}
	all, e := h.pushConfigs(c.r, taskID)
	if e != nil {
		return nil, e, false
	}
	return json.RawMessage(appendPushList(nil, c.d, taskID, all)), nil, false
}

// appendPushList appends a task's configurations: 1.0's
// ListTaskPushNotificationConfigsResponse, or 0.3's array.
func appendPushList(dst []byte, d dialect, taskID string, all []pushConfig) []byte {
	if d == v10 {
		dst = append(dst, `{"configs":`...)
	}
	dst = append(dst, '[')
	for i, cfg := range all {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendPushConfig(dst, d, taskID, cfg)
	}
	dst = append(dst, ']')
	if d == v10 {
		dst = append(dst, `,"nextPageToken":""}`...)
	}
	return dst
}

// pushDeleteMethod answers DeleteTaskPushNotificationConfig (0.3:
// tasks/pushNotificationConfig/delete).
func pushDeleteMethod(h *Handler, c *rpcCall) (any, *rpcError, bool) {
	if h.push == nil {
		return nil, pushUnsupported, false
	}
	taskID, id, e := pushParams(c)
	if e == nil && id == "" {
		field := "id"
		if c.d == v03 {
			field = "pushNotificationConfigId"
		}
		e = invalidParams(field, "required: the configuration's id")
	}
	if e == nil {
		e = h.deletePush(c.r, taskID, id)
	}
	if e != nil {
		return nil, e, false
	}
	if c.d == v03 {
		return json.RawMessage("null"), nil, false
	}
	return json.RawMessage("{}"), nil, false
}

// serveRESTPush answers /tasks/{id}/pushNotificationConfigs[/{configId}]:
// POST and GET on the collection, GET and DELETE on one.
func (h *Handler) serveRESTPush(w http.ResponseWriter, r *http.Request, taskID, id string, one bool) {
	fail := func(e *rpcError) {
		if e.Code == codePushNotSupported {
			writeRESTError(w, http.StatusBadRequest, "PUSH_NOTIFICATION_NOT_SUPPORTED", e.Message)
			return
		}
		writeRESTError(w, restStatusOf(e), restReason(e), e.Message, restDetails(e)...)
	}
	if h.push == nil {
		fail(pushUnsupported)
		return
	}
	write := func(b []byte) {
		w.Header().Set("Content-Type", "application/a2a+json")
		_, _ = w.Write(b)
	}
	switch {
	case !one && r.Method == http.MethodPost:
		buf, ok := h.readBody(w, r, func(status int, msg string) { writeRESTError(w, status, "INVALID_ARGUMENT", msg) })
		if !ok {
			return
		}
		defer wire.ReleaseBuffer(buf)
		doc, err := jsonparse.Parse(buf.Bytes())
		if err != nil {
			writeRESTError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Invalid JSON payload: "+err.Error())
			return
		}
		defer jsonparse.Release(doc)
		node := int32(0)
		if v := doc.Member(0, "config"); v >= 0 && doc.Kind(v) == jsonparse.KindObject {
			node = v // a body that wraps the configuration
		}
		cfg, e := readPushConfig(doc, node, "")
		if e == nil {
			e = h.checkPush(r, v10, &cfg, "")
		}
		if e == nil {
			e = h.setPush(r, taskID, cfg)
		}
		if e != nil {
			fail(e)
			return
		}
		write(appendPushConfig(nil, v10, taskID, cfg))
	case !one && r.Method == http.MethodGet:
		all, e := h.pushConfigs(r, taskID)
		if e != nil {
			fail(e)
			return
		}
		write(appendPushList(nil, v10, taskID, all))
	case one && r.Method == http.MethodGet:
		cfg, e := h.getPush(r, taskID, id)
		if e != nil {
			fail(e)
			return
		}
		write(appendPushConfig(nil, v10, taskID, cfg))
	case one && r.Method == http.MethodDelete:
		if e := h.deletePush(r, taskID, id); e != nil {
			fail(e)
			return
		}
		write([]byte("{}"))
	default:
		allow := "GET, POST"
		if one {
			allow = "GET, DELETE"
		}
		w.Header().Set("Allow", allow)
		writeRESTError(w, http.StatusMethodNotAllowed, "METHOD_NOT_FOUND", "A task's push notification configurations are created with POST, listed and read with GET, and deleted with DELETE")
	}
}
