// Command gen writes README.md and docs/*.md from their sources in
// internal/docs (see package docs for the %include directive).
//
//	go run ./internal/docs/gen            # from the repository's root
//	go generate ./internal/docs           # the same, from anywhere
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/otcgo/otc/internal/docs"
)

func main() {
	root := flag.String("root", ".", "the repository's root")
	flag.Parse()
	if err := run(*root); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(root string) error {
	sources, err := docs.Sources(root)
	if err != nil {
		return err
	}
	for _, s := range sources {
		out, err := docs.Generate(root, s)
		if err != nil {
			return err
		}
		path := filepath.Join(root, filepath.FromSlash(s.Out))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, out, 0o644); err != nil {
			return err
		}
	}
	return nil
}
