package prompt_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/prompt"
)

func TestRegisterRefuses(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	say := func(context.Context, struct{}) (string, error) { return "", nil }
	_, err := prompt.Register(reg, prompt.Prompt[struct{}]{Name: "taken"}, say)
	require.NoError(t, err)
	for name, tc := range map[string]struct {
		p    prompt.Prompt[struct{}]
		want string
	}{
		"no_name": {prompt.Prompt[struct{}]{}, "Name must be 1 to 128 characters"},
		"space":   {prompt.Prompt[struct{}]{Name: "a b"}, "without white space"},
		"title":   {prompt.Prompt[struct{}]{Name: "t", Title: "a\nb"}, "one line"},
		"taken":   {prompt.Prompt[struct{}]{Name: "taken"}, "a prompt named taken is registered already"},
		"policy":  {prompt.Prompt[struct{}]{Name: "p", Policy: &otc.Policy{RequiredScopes: []string{`"`}}}, "Policy:"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := prompt.Register(reg, tc.p, say)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	_, err = prompt.Register(reg, prompt.Prompt[struct{}]{Name: "n"}, func(context.Context, struct{}) (int, error) { return 0, nil })
	assert.ErrorContains(t, err, "the function returns int: a prompt returns a string, a Message, a []Message or a Result")
	type nested struct {
		Where struct {
			City string `json:"city" jsonschema:"description=A city."`
		} `json:"where" jsonschema:"description=A place."`
	}
	_, err = prompt.Register(reg, prompt.Prompt[nested]{Name: "nested"}, func(context.Context, nested) (string, error) { return "", nil })
	assert.ErrorContains(t, err, `the argument "where" is an object`)
	_, err = prompt.Register[struct{}, string](reg, prompt.Prompt[struct{}]{Name: "nil"}, nil)
	assert.ErrorContains(t, err, "the function is nil")
}
