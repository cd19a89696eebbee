package resource_test

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/resource"
)

// A resource at a fixed URI, and a template whose variables are the
// fields of a struct, served over MCP beside the registry's tools.
func Example() {
	reg := otc.NewRegistry(nil)
	notes, err := resource.Register(reg, resource.Resource{
		URI: "notes://today", Name: "today", Description: "Today's notes.", MIMEType: "text/markdown",
	}, func(context.Context) (string, error) {
		return "# Today\n- ship resources", nil
	})
	if err != nil {
		panic(err)
	}
	type day struct {
		Date  string `json:"date" jsonschema:"required,format=date,description=The day, as 2006-01-02."`
		Lines int    `json:"lines,omitempty" jsonschema:"minimum=1,default=20,description=How many lines to read."`
	}
	_, err = resource.RegisterTemplate(reg, resource.Template[day]{
		URITemplate: "notes://days/{date}{?lines}", Name: "day", MIMEType: "text/markdown",
	}, func(_ context.Context, in day) (string, error) {
		return fmt.Sprintf("# %s (first %d lines)", in.Date, in.Lines), nil
	})
	if err != nil {
		panic(err)
	}
	notes.Changed() // subscribers are told to read it again

	http.Handle("/mcp", mcp.NewHandler(reg, nil))
}

// A template whose variables and input disagree is refused when it is
// registered, naming both.
func ExampleRegisterTemplate_mismatch() {
	type user struct {
		ID string `json:"id" jsonschema:"required,description=The user's id."`
	}
	_, err := resource.RegisterTemplate(otc.NewRegistry(nil), resource.Template[user]{
		URITemplate: "db://users{?id}", Name: "user",
	}, func(_ context.Context, in user) (user, error) { return in, nil })
	fmt.Fprintln(os.Stdout, err)
	// Output:
	// resource: template "db://users{?id}": input type resource_test.user: URI template "db://users{?id}" and its input disagree: the input requires "id", which a URI may leave out ({?id}): make the property optional
}
