package primitive

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/otcgo/otc/internal/uritemplate"
	"github.com/otcgo/otc/internal/wire"
)

// NewCompleter makes the Completer of a template's variables or a
// prompt's arguments, whose input type In has the JSON Schema schema:
// fn, when not nil, is given the values already chosen as an In (those
// that fit their fields; the others left out); without fn, or for an
// argument fn gives no values for, the values of the argument's enum that
// begin with the prefix. An argument the schema has no property for is an
// invalid-input error naming the arguments there are.
func NewCompleter[In any](schema json.RawMessage, fn func(ctx context.Context, argument, prefix string, chosen In) ([]string, error)) Completer {
	var s struct {
		Properties map[string]struct {
			Enum  []any `json:"enum"`
			Items *struct {
				Enum []any `json:"enum"`
			} `json:"items"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s) // the registry's own reflection: an object
	enums := map[string][]string{}
	var names []string
	for name, p := range s.Properties {
		names = append(names, name)
		list := p.Enum
		if list == nil && p.Items != nil {
			list = p.Items.Enum
		}
		for _, v := range list {
			enums[name] = append(enums[name], fmt.Sprint(v))
		}
	}
	slices.Sort(names)
	binder, err := uritemplate.NewBinder(schema)
	if err != nil { // the registry's own reflection: it reads
		binder, _ = uritemplate.NewBinder(json.RawMessage(`{}`))
	}
	return func(ctx context.Context, argument, prefix string, chosen map[string]string) ([]string, int, bool, error) {
		if !slices.Contains(names, argument) {
			return nil, 0, false, seam.InvalidInput(map[string]string{wire.Truncate(argument, 64): "there is no such argument to complete: the arguments are " + strings.Join(names, ", ")}, "")
		}
		var values []string
		if fn != nil {
			var in In
			vs := uritemplate.Values{}
			for k, v := range chosen {
				if k != argument {
					vs[k] = v
				}
			}
			// What the chosen values make of the input, each on its own, so
			// that one that does not fit its field leaves the others.
			for k, v := range vs {
				if raw, err := binder.Input(uritemplate.Values{k: v}); err == nil {
					_ = json.Unmarshal(raw, &in)
				}
			}
			var err error
			if values, err = fn(ctx, argument, prefix, in); err != nil {
				return nil, 0, false, err
			}
		}
		if values == nil {
			for _, v := range enums[argument] {
				if strings.HasPrefix(v, prefix) {
					values = append(values, v)
				}
			}
		}
		total := len(values)
		if total > MaxCompletions {
			return values[:MaxCompletions:MaxCompletions], total, true, nil
		}
		return values, total, false, nil
	}
}
