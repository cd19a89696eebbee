package prompt_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
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

// TestResultTypeCheckedByCompiler: a function whose result is not one a
// prompt renders does not compile (prompt.Rendered), where it used to
// fail at registration; the same program with a string result does.
func TestResultTypeCheckedByCompiler(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	t.Parallel()
	build := func(result, value string) (string, error) {
		dir := t.TempDir()
		src := `package prompt

import (
	"context"

	"github.com/otcgo/otc"
)

var _, _ = Register(otc.NewRegistry(nil), Prompt[struct{}]{Name: "n"}, func(context.Context, struct{}) (` + result + `, error) { return ` + value + `, nil })
`
		file := filepath.Join(dir, "zz_result.go")
		require.NoError(t, os.WriteFile(file, []byte(src), 0o600))
		here, err := filepath.Abs("zz_result.go")
		require.NoError(t, err)
		overlay, err := json.Marshal(map[string]map[string]string{"Replace": {here: file}})
		require.NoError(t, err)
		ov := filepath.Join(dir, "overlay.json")
		require.NoError(t, os.WriteFile(ov, overlay, 0o600))
		out, err := exec.Command("go", "build", "-overlay="+ov, ".").CombinedOutput()
		return string(out), err
	}
	out, err := build("int", "0")
	require.Error(t, err, "a prompt returning an int compiled")
	assert.Contains(t, out, "int does not satisfy Rendered")
	out, err = build("string", `""`)
	assert.NoError(t, err, out)
}
