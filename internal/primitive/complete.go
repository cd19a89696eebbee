package primitive

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/otcgo/otc/internal/params"
	"github.com/otcgo/otc/internal/uritemplate"
	"github.com/otcgo/otc/internal/wire"
)

// NewCompleter makes the Completer of a template's variables or a
// prompt's arguments, whose input type In has the parameters ps: fn,
// when not nil, is given the values already chosen as an In (those that
// fit their fields; the others left out); without fn, or for an argument
// fn gives no values for, the values of the parameter's enum that begin
// with the prefix. An argument that is no parameter is an invalid-input
// error naming the parameters there are.
func NewCompleter[In any](ps params.List, fn func(ctx context.Context, argument, prefix string, chosen In) ([]string, error)) Completer {
	names := ps.Names()
	binder := uritemplate.NewBinder(ps)
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
			p, _ := ps.Get(argument)
			for _, v := range p.Enum {
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
