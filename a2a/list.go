package a2a

import (
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/caller"
	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/tasks"
)

// This file serves ListTasks (GET /tasks): the caller's own tasks, most
// recently updated first, a page at a time. The task store lists them
// ([tasks.Lister]); a store that cannot is answered UnsupportedOperation.

// Bounds of a page of ListTasks, as the specification gives them.
const (
	defaultPageSize = 50
	maxPageSize     = 100
)

// listQuery is a ListTasks request.
type listQuery struct {
	contextID, status string
	pageSize          int
	pageToken         string
	after             time.Time
	artifacts         bool
	// history is how many of each task's most recent messages to list,
	// historyAll when not given.
	history int
}

// taskStates are the states a ListTasks status filter may name.
var taskStates = []string{stateWorking, stateInputRequired, stateCompleted, stateFailed, stateCanceled,
	"TASK_STATE_SUBMITTED", "TASK_STATE_REJECTED", "TASK_STATE_AUTH_REQUIRED"}

// check checks q's values, and sets the page size's default.
func (q *listQuery) check() *rpcError {
	switch {
	case q.pageSize == 0:
		q.pageSize = defaultPageSize
	case q.pageSize < 1 || q.pageSize > maxPageSize:
		return invalidParams("pageSize", fmt.Sprintf("from 1 to %d", maxPageSize))
	}
	if q.status != "" && q.status != "TASK_STATE_UNSPECIFIED" && !slices.Contains(taskStates, q.status) {
		return invalidParams("status", "one of "+strings.Join(taskStates, ", "))
	}
	if q.pageToken != "" {
		if _, _, ok := readPageToken(q.pageToken); !ok {
			return invalidParams("pageToken", "not a token this agent gave: send the nextPageToken of the previous page, or none for the first")
		}
	}
	return nil
}

// readListParams reads ListTasks's JSON-RPC params.
func readListParams(d *jsonparse.Document, params int32) (listQuery, *rpcError) {
	q := listQuery{history: historyAll}
	if params < 0 || d.Kind(params) == jsonparse.KindNull {
		return q, q.check()
	}
	if d.Kind(params) != jsonparse.KindObject {
		return q, invalidParams("params", "must be an object")
	}
	str := func(name string, into *string) *rpcError {
		v := d.Member(params, name)
		if v < 0 || d.Kind(v) == jsonparse.KindNull {
			return nil
		}
		if d.Kind(v) != jsonparse.KindString {
			return invalidParams(name, "must be a string")
		}
		*into = d.StringValue(v)
		return nil
	}
	var size, after string
	for name, into := range map[string]*string{"contextId": &q.contextID, "status": &q.status, "pageToken": &q.pageToken, "statusTimestampAfter": &after} {
		if e := str(name, into); e != nil {
			return q, e
		}
	}
	if v := d.Member(params, "pageSize"); v >= 0 && d.Kind(v) != jsonparse.KindNull {
		if d.Kind(v) == jsonparse.KindString {
			size = d.StringValue(v)
		} else {
			size = string(d.Raw(v))
		}
	}
	var e *rpcError
	if q.history, e = readHistoryLength(d, params, "historyLength"); e != nil {
		return q, e
	}
	if v := d.Member(params, "includeArtifacts"); v >= 0 {
		switch d.Kind(v) {
		case jsonparse.KindTrue:
			q.artifacts = true
		case jsonparse.KindFalse, jsonparse.KindNull:
		default:
			return q, invalidParams("includeArtifacts", "must be true or false")
		}
	}
	return q, q.parse(size, after)
}

// readListQuery reads GET /tasks's query.
func readListQuery(v url.Values) (listQuery, *rpcError) {
	q := listQuery{contextID: v.Get("contextId"), status: v.Get("status"), pageToken: v.Get("pageToken"), history: historyAll}
	if s := v.Get("historyLength"); s != "" {
		var e *rpcError
		if q.history, e = parseHistoryLength(s, "historyLength"); e != nil {
			return q, e
		}
	}
	switch v.Get("includeArtifacts") {
	case "", "false":
	case "true":
		q.artifacts = true
	default:
		return q, invalidParams("includeArtifacts", "must be true or false")
	}
	after := v.Get("statusTimestampAfter")
	if after == "" {
		after = v.Get("lastUpdatedAfter") // the name the Go SDK's HTTP+JSON client sends
	}
	return q, q.parse(v.Get("pageSize"), after)
}

// parse reads the page size and the timestamp, given as text, and checks
// q.
func (q *listQuery) parse(size, after string) *rpcError {
	if size != "" {
		n, err := strconv.Atoi(size)
		if err != nil {
			return invalidParams("pageSize", "must be a whole number")
		}
		if n == 0 {
			n = -1 // given as 0: out of range, not the default
		}
		q.pageSize = n
	}
	if after != "" {
		t, err := time.Parse(time.RFC3339Nano, after)
		if err != nil {
			return invalidParams("statusTimestampAfter", "must be a timestamp such as 2026-01-02T15:04:05Z")
		}
		q.after = t
	}
	return q.check()
}

// pageToken is the cursor after task id, last updated at.
func pageToken(at time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(at.UnixNano(), 10) + ":" + id))
}

// readPageToken reads a cursor pageToken wrote.
func readPageToken(s string) (time.Time, string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return time.Time{}, "", false
	}
	ns, id, ok := strings.Cut(string(b), ":")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !ok || err != nil || id == "" {
		return time.Time{}, "", false
	}
	return time.Unix(0, n), id, true
}

// listTasks answers ListTasks: a ListTasksResponse. An anonymous caller
// is listed nothing: it cannot prove that it started any task (callers
// behind one address, or one /64, share its key), so it follows its tasks
// by the ids it was given, and never learns another's.
func (h *Handler) listTasks(r *http.Request, d dialect, q listQuery) ([]byte, *rpcError) {
	ctx := r.Context()
	lister, ok := h.runner.Store().(tasks.Lister)
	if !ok {
		return nil, &rpcError{Code: codeUnsupported, Message: "Listing tasks is not supported by this agent: its task store cannot list them; get each task by its id", Data: errorInfo("UNSUPPORTED_OPERATION", nil)}
	}
	owner, err := caller.Key(ctx, r)
	var all []*tasks.Task
	if err == nil && otc.CallerIdentity(ctx) != nil {
		all, err = lister.List(ctx, owner)
		if err != nil {
			h.logger.ErrorContext(ctx, "a2a: the task store failed to list tasks", slog.String("error", err.Error()))
			return nil, &rpcError{Code: codeInternalError, Message: "Internal error: the task store failed; try again"}
		}
	} // an anonymous caller, or one whose credential names no one, is listed none
	// Most recently updated first; the id breaks ties, so that a cursor
	// names one place.
	slices.SortFunc(all, func(a, b *tasks.Task) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	var page []*task
	total := 0
	var curAt time.Time
	var curID string
	hasCursor := false
	if q.pageToken != "" {
		curAt, curID, hasCursor = readPageToken(q.pageToken)
	}
	var last *tasks.Task
	more := false
	for _, st := range all {
		t := h.taskState(d, st, "")
		if q.contextID != "" && t.ContextID != q.contextID ||
			q.status != "" && q.status != "TASK_STATE_UNSPECIFIED" && t.Status.State != q.status ||
			!q.after.IsZero() && st.UpdatedAt.Before(q.after) {
			continue
		}
		total++
		if hasCursor {
			if c := curAt.Compare(st.UpdatedAt); c < 0 || c == 0 && st.ID <= curID {
				continue // on an earlier page
			}
		}
		if len(page) == q.pageSize {
			more = true
			continue
		}
		if !q.artifacts {
			t.Artifacts = nil
		}
		t.History = history(d, st, q.history)
		page = append(page, t)
		last = st
	}
	b := []byte(`{"tasks":[`)
	for i, t := range page {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendTask(b, t)
	}
	b = append(b, `],"nextPageToken":"`...)
	if more && last != nil {
		b = append(b, pageToken(last.UpdatedAt, last.ID)...)
	}
	b = append(b, `","pageSize":`...)
	b = strconv.AppendInt(b, int64(q.pageSize), 10)
	b = append(b, `,"totalSize":`...)
	b = strconv.AppendInt(b, int64(total), 10)
	return append(b, '}'), nil
}
