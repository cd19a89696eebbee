package taskrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/otcgo/otc/tasks"

	"github.com/otcgo/otc"
)

// Question is a question of a task's call as the store keeps it in
// [Task.InputRequests]: the request's method and params, as MCP defines
// them ("elicitation/create" and its params, for instance). Every wire
// format that serves tasks reads the questions in this form and writes
// them in its own.
type Question struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// Questions decodes the open questions of t, by key.
func Questions(t *tasks.Task) map[string]Question {
	out := make(map[string]Question, len(t.InputRequests))
	for k, raw := range t.InputRequests {
		var q Question
		_ = json.Unmarshal(raw, &q) // written by an Asker
		out[k] = q
	}
	return out
}

// An Asker puts the questions of a task's call to its client through the
// task: the task goes to [tasks.InputRequired] with them, and the call waits
// until answers reach the store ([Runner.Answer], on any replica), or the
// task ends. Install it as the call's [otc.CallRequest.Asker]. Make one
// with [Runner.NewAsker].
type Asker struct {
	r     *Runner
	id    string
	l     *Local
	allow func(otc.InputRequest) error

	mu   sync.Mutex
	next int             // numbers the questions without a key of their own
	used map[string]bool // the keys given over the task's life
	open int             // the questions asked and not yet taken, of every Ask at once
}

// NewAsker returns the Asker of task id, which this process runs as l.
// allow, when not nil, refuses a question the client cannot answer (its
// error is returned by Ask, and should wrap [otc.ErrInputUnsupported]).
func (r *Runner) NewAsker(id string, l *Local, allow func(otc.InputRequest) error) *Asker {
	return &Asker{r: r, id: id, l: l, allow: allow}
}

// Ask implements [otc.Asker].
func (a *Asker) Ask(ctx context.Context, reqs []otc.InputRequest) ([]json.RawMessage, error) {
	if a.allow != nil {
		for _, r := range reqs {
			if err := a.allow(r); err != nil {
				return nil, err
			}
		}
	}
	questions := make(map[string]json.RawMessage, len(reqs))
	keys := make([]string, len(reqs))
	a.mu.Lock()
	for i, r := range reqs {
		keys[i] = a.keyFor(r.Key)
		params := r.Params
		if len(params) == 0 {
			params = json.RawMessage(`{}`)
		}
		q, err := json.Marshal(Question{r.Method, params})
		if err != nil {
			a.mu.Unlock()
			return nil, fmt.Errorf("%s: ask: the params of %s are not valid JSON: %w", a.r.opts.Name, r.Method, err)
		}
		questions[keys[i]] = q
	}
	a.open += len(keys)
	a.mu.Unlock()
	closed := false // the questions no longer count as open
	defer func() {
		if !closed {
			a.mu.Lock()
			a.open -= len(keys)
			a.mu.Unlock()
		}
	}()

	store := a.r.store
	t, err := store.Update(ctx, a.id, a.r.said(a.id, &tasks.Update{Status: tasks.InputRequired, InputRequests: questions,
		StatusMessage: "Waiting for the client's answers to the task's questions"}))
	if err != nil {
		return nil, fmt.Errorf("%s: ask: recording the task's questions: %w", a.r.opts.Name, err)
	}
	if t.Status == tasks.InputRequired {
		a.r.changed(t)
	}
	a.l.notify()
	tick := time.NewTicker(a.r.opts.PollInterval)
	defer tick.Stop()
	for {
		if t.Status.Terminal() {
			a.l.Cancel()
			return nil, fmt.Errorf("%s: ask: the task ended (%s) before its questions were answered", a.r.opts.Name, t.Status)
		}
		if answers, ok := answered(t, keys); ok {
			u := &tasks.Update{Taken: keys}
			a.mu.Lock()
			a.open -= len(keys)
			closed = true
			if a.open == 0 { // no other Ask waits: the task works again
				u.Status = tasks.Working
			}
			a.mu.Unlock()
			now, err := store.Update(ctx, a.id, u)
			if err != nil {
				return nil, fmt.Errorf("%s: ask: resuming the task: %w", a.r.opts.Name, err)
			}
			if u.Status == tasks.Working && now.Status == tasks.Working {
				a.r.changed(now)
			}
			a.l.notify()
			return answers, nil
		}
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-a.l.Wake:
		case <-tick.C:
		}
		if t, err = store.Update(ctx, a.id, &tasks.Update{}); err != nil {
			if errors.Is(err, tasks.ErrNotFound) {
				return nil, fmt.Errorf("%s: ask: the task is gone: %w", a.r.opts.Name, err)
			}
			t = &tasks.Task{Status: tasks.InputRequired} // a blip of the store: look again at the next tick
		}
	}
}

// keyFor returns the key of a question: its own key (InputRequest.Key),
// or "q" and a number for one without, made unique over the task's life
// (a key asked again gets "#" and a number). a.mu is held.
func (a *Asker) keyFor(own string) string {
	if a.used == nil {
		a.used = map[string]bool{}
	}
	key := own
	for key == "" || a.used[key] {
		a.next++
		if own == "" {
			key = "q" + strconv.Itoa(a.next)
		} else {
			key = own + "#" + strconv.Itoa(a.next)
		}
	}
	a.used[key] = true
	return key
}

// answered returns the answers to keys, in order, when the task holds
// them all.
func answered(t *tasks.Task, keys []string) ([]json.RawMessage, bool) {
	out := make([]json.RawMessage, len(keys))
	for i, k := range keys {
		v, ok := t.InputResponses[k]
		if !ok {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

// AnswerError is the refusal of an answer that does not fit its
// question: nothing of the answers given was taken, and the task still
// waits for them.
type AnswerError struct {
	Key    string // the question's key
	Method string // the question's method
	Reason string // what is wrong with the answer
}

// Error says which answer is wrong, and why.
func (e *AnswerError) Error() string {
	return fmt.Sprintf("otc/tasks: the answer to question %q (%s) is invalid: %s", e.Key, e.Method, e.Reason)
}

// Answer delivers answers, by key, to the open questions of task t (as
// the caller read it from the store): each answer to an open question
// must fit it, or nothing is taken and an [*AnswerError] says which is
// wrong; answers under other keys (never asked, answered already) are
// ignored. The call waiting for them is woken when this process runs it;
// another replica finds them at its next look at the store.
func (r *Runner) Answer(ctx context.Context, t *tasks.Task, answers map[string]json.RawMessage, message json.RawMessage) error {
	for _, k := range slices.Sorted(maps.Keys(answers)) {
		raw, open := t.InputRequests[k]
		if !open {
			continue
		}
		var q Question
		_ = json.Unmarshal(raw, &q) // written by an Asker
		if reason := seam.CheckAnswer(q.Method, q.Params, answers[k]); reason != "" {
			return &AnswerError{Key: k, Method: q.Method, Reason: reason}
		}
	}
	if err := r.store.Respond(ctx, t.ID, answers, message); err != nil {
		return err
	}
	if l := r.Lookup(t.ID); l != nil {
		select {
		case l.Wake <- struct{}{}:
		default:
		}
	}
	return nil
}
