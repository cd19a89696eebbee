// Package docs builds the repository's README.md and the guides in docs/
// from the sources beside this file, so that every Go snippet a reader
// sees is code that compiles and, where it can run, is tested.
//
// A source is Markdown with one directive of its own, on a line by itself:
//
//	%include PATH [NAME]
//
// PATH is a Go file, relative to the repository's root. Without NAME the
// whole file is included; with NAME, the lines between the markers
//
//	// docs:start NAME
//	// docs:end NAME
//
// or, when the file has no such markers, the top-level declaration called
// NAME, with its doc comment. The lines become a ```go block, with their
// common indentation removed and the markers of other regions dropped, so
// that a region can cover a few lines in the middle of an Example.
//
// A second directive shows what an Example prints, as its output comment
// says (and so as its test checks), in a block of plain text:
//
//	%output PATH EXAMPLE
//
// Sources may not hold ```go blocks of their own: Go code comes from a
// file that the compiler checks. Shell sessions, JSON and tables are
// written as they are.
//
// Where each source goes:
//
//	internal/docs/README.src.md  →  README.md
//	internal/docs/index.src.md   →  docs/README.md
//	internal/docs/NAME.src.md    →  docs/NAME.md
//
// Run the generator after changing a source or a snippet:
//
//	go generate ./internal/docs
//
// TestGenerated fails when a file on disk is not what the generator would
// write, and TestLinks when a relative link or its #anchor leads nowhere.
// The snippets live in this package's tests (package docs_test), which use
// only the exported API, in internal/docs/quickstart (the README's server),
// and in examples of the packages themselves: the root's, and those of the
// nested modules (otel, redisstore, mcpsdk), whose dependencies the root
// module does not have.
package docs

//go:generate go run ./gen -root ../..
