package search_test

import (
	"context"
	"fmt"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/resource"
	"github.com/otcgo/otc/search"
)

// A program with an embedding model at hand (here Ollama's, on its
// default port) has its searches rank tools by meaning too; without one,
// or when it fails, the words alone rank them.
func ExampleUseEmbedder() {
	reg := otc.NewRegistry(nil)
	// docs:start embedder
	err := search.UseEmbedder(reg, &search.EmbeddingOptions{
		Embedder: &search.OpenAIEmbedder{
			URL:   "http://127.0.0.1:11434/v1/embeddings", // ollama pull nomic-embed-text
			Model: "nomic-embed-text",
		},
	})
	// docs:end embedder
	if err != nil {
		panic(err)
	}
}

// The resources, prompts and skills a caller may read are searched as
// tools are.
func ExampleReadables() {
	reg := otc.NewRegistry(nil)
	_, err := resource.Register(reg, resource.Resource{URI: "notes://holidays", Name: "holidays", Description: "The public holidays of this year."},
		func(context.Context) (string, error) { return "1 January, 25 December", nil })
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	// docs:start readables
	found, err := search.Readables(ctx, reg, "when are the public holidays", &search.Options{Limit: 5})
	if err != nil {
		panic(err)
	}
	for _, r := range found {
		fmt.Println(r.Kind, r.Key)
	}
	// docs:end readables

	// Output:
	// resource notes://holidays
}
