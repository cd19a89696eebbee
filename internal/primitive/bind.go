package primitive

import (
	"errors"
	"reflect"

	"github.com/otcgo/otc/internal/decode"
	"github.com/otcgo/otc/internal/hook"
	"github.com/otcgo/otc/internal/uritemplate"
)

// Binding makes the variables a URI bound (or a prompt's arguments) an
// In, as the registry makes a tool's input: typed by the input schema,
// validated and defaulted by prepare, decoded as a tool's input is. It is
// built once, at registration.
type Binding[In any] struct {
	binder  *uritemplate.Binder
	prepare func([]byte) ([]byte, error)
	direct  *decode.Direct
}

// NewBinding returns the Binding of In, whose input is in (the seam's
// Input of In).
func NewBinding[In any](in *hook.Input) *Binding[In] {
	return &Binding[In]{binder: uritemplate.NewBinder(in.Params), prepare: in.Prepare, direct: decode.NewDirect(reflect.TypeFor[In]())}
}

// Bind makes vars an In. A variable of the wrong type, or one the schema
// refuses, is the registry's invalid-input error, naming it.
func (b *Binding[In]) Bind(vars uritemplate.Values) (In, error) {
	var in In
	raw, err := b.binder.Input(vars)
	if err != nil {
		var pe *uritemplate.ParamError
		if errors.As(err, &pe) {
			return in, seam.InvalidInput(map[string]string{pe.Name: pe.Message}, "")
		}
		return in, err
	}
	prepared, err := b.prepare(raw)
	if err != nil {
		return in, err
	}
	if in, err = decode.Input[In](b.direct, prepared); err != nil {
		return in, seam.InvalidInput(nil, err.Error())
	}
	return in, nil
}
