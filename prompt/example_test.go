package prompt_test

import (
	"context"
	"fmt"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/prompt"
)

// A prompt whose arguments are the fields of a struct: a client lists it
// with its arguments, completes "tone" from its enum, and renders it.
func Example() {
	type review struct {
		Code string `json:"code" jsonschema:"required,description=The code to review."`
		Tone string `json:"tone,omitempty" jsonschema:"enum=kind,enum=blunt,default=kind,description=How to say it."`
	}
	reg := otc.NewRegistry(nil)
	_, err := prompt.Register(reg, prompt.Prompt[review]{
		Name: "review", Title: "Review code", Description: "Asks for a review of a piece of code.",
	}, func(_ context.Context, in review) (string, error) {
		return fmt.Sprintf("Review this code, %s:\n\n%s", in.Tone, in.Code), nil
	})
	fmt.Println(err)
	// Output: <nil>
}
