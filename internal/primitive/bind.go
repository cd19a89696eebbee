package primitive

import (
	"encoding/json"
	"errors"

	"github.com/otcgo/otc/internal/hook"
	"github.com/otcgo/otc/internal/uritemplate"
)

// Bind makes the variables a URI bound (or a prompt's arguments) an In:
// typed by the input schema, validated and defaulted by prepare. A
// variable of the wrong type, or one the schema refuses, is the
// registry's invalid-input error, naming it.
func Bind[In any](vars uritemplate.Values, schema json.RawMessage, prepare func([]byte) ([]byte, error)) (In, error) {
	var in In
	raw, err := uritemplate.Input(vars, schema)
	if err != nil {
		var pe *uritemplate.ParamError
		if errors.As(err, &pe) {
			return in, hook.InvalidInput(map[string]string{pe.Name: pe.Message}, "")
		}
		return in, err
	}
	prepared, err := prepare(raw)
	if err != nil {
		return in, err
	}
	if err := json.Unmarshal(prepared, &in); err != nil {
		return in, hook.InvalidInput(nil, err.Error())
	}
	return in, nil
}
