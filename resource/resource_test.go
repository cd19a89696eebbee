package resource_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/resource"
)

func text(context.Context) (string, error) { return "", nil }

func TestRegisterRefuses(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	_, err := resource.Register(reg, resource.Resource{URI: "test://taken", Name: "taken"}, text)
	require.NoError(t, err)
	bad := 1.5
	for name, tc := range map[string]struct {
		r    resource.Resource
		want string
	}{
		"no_uri":       {resource.Resource{Name: "n"}, "URI is required"},
		"relative":     {resource.Resource{URI: "notes/today.md", Name: "n"}, "URI must be absolute"},
		"space":        {resource.Resource{URI: "test://a b", Name: "n"}, "no white space"},
		"no_name":      {resource.Resource{URI: "test://n"}, "the name (Name) is required"},
		"taken":        {resource.Resource{URI: "test://taken", Name: "again"}, "a resource at test://taken is registered already"},
		"title":        {resource.Resource{URI: "test://t", Name: "t", Title: "a\nb"}, "one line"},
		"priority":     {resource.Resource{URI: "test://p", Name: "p", Annotations: &resource.Annotations{Priority: &bad}}, "Priority is 1.5"},
		"audience":     {resource.Resource{URI: "test://a", Name: "a", Annotations: &resource.Annotations{Audience: []string{"robot"}}}, `Audience holds "robot"`},
		"bad_policy":   {resource.Resource{URI: "test://q", Name: "q", Policy: &otc.Policy{RequiredScopes: []string{"a b"}}}, "Policy:"},
		"bad_protocol": {resource.Resource{URI: "test://r", Name: "r", Policy: &otc.Policy{Protocols: []string{" "}}}, "Policy:"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := resource.Register(reg, tc.r, text)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "resource: ")
		})
	}
	_, err = resource.Register[string](reg, resource.Resource{URI: "test://nil", Name: "nil"}, nil)
	assert.ErrorContains(t, err, "the read function is nil")
	_, err = resource.Register(nil, resource.Resource{URI: "test://x", Name: "x"}, text)
	assert.ErrorContains(t, err, "nil *otc.Registry")
}

type pathArgs struct {
	Path  string `json:"path" jsonschema:"required,description=The file."`
	Depth int    `json:"depth,omitempty" jsonschema:"description=How deep."`
}

func TestRegisterTemplateRefuses(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	read := func(context.Context, pathArgs) (string, error) { return "", nil }
	_, err := resource.RegisterTemplate(reg, resource.Template[pathArgs]{URITemplate: "file:///{+path}{?depth}", Name: "f"}, read)
	require.NoError(t, err)
	for name, tc := range map[string]struct {
		tmpl, want string
	}{
		"malformed":       {"file:///{path", "file:///{path"},
		"unknown_var":     {"file:///{+path}/{owner}", `the variable "owner" has no property of that name`},
		"required_absent": {"file:///x{?depth}", `the input requires "path", which the template has no variable for`},
		"required_query":  {"file:///x{?path,depth}", `which a URI may leave out`},
		"ambiguous":       {"file:///{path}{depth}", "could be read back two ways"},
		"taken":           {"file:///{+path}{?depth}", "is registered already"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := resource.RegisterTemplate(reg, resource.Template[pathArgs]{URITemplate: tc.tmpl, Name: "f"}, read)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "resource: template ")
		})
	}
	type undescribed struct {
		ID string `json:"id" jsonschema:"required"`
	}
	_, err = resource.RegisterTemplate(reg, resource.Template[undescribed]{URITemplate: "db://{id}", Name: "u"},
		func(context.Context, undescribed) (string, error) { return "", nil })
	assert.ErrorContains(t, err, `input parameter "id" (field undescribed.ID) has no description`)
}
