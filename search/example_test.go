package search_test

import (
	"github.com/otcgo/otc"
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
