package search

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestTerms(t *testing.T) {
	for in, want := range map[string][]string{
		"get_file_contents":         {"get", "file", "content"},
		"listIssues":                {"list", "issue"},
		"HTTPServer v2Beta":         {"http", "server", "v2", "beta"},
		"read-file.v2":              {"read", "file", "v2"},
		"Searching the directories": {"search", "directory"},
		"What is running?":          {"run"},
		"café naïve":                {"café", "naïve"},
		"\x00\x1b[31m":              {"31m"},
		"":                          nil,
	} {
		assert.Equal(t, want, terms(nil, in), "%q", in)
	}
	long := terms(nil, strings.Repeat("é", 100))
	assert.Len(t, long, 1)
	assert.LessOrEqual(t, len(long[0]), maxTermBytes)
	assert.True(t, utf8.ValidString(long[0]), "a term cut at its bound stays UTF-8")
}

func FuzzTerms(f *testing.F) {
	for _, s := range []string{"get_file_contents", "HTTPServer", "\xff\xfe", "ÉTÉ été", "a1B2c3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, term := range terms(nil, s) {
			if term == "" || len(term) > maxTermBytes || !utf8.ValidString(term) {
				t.Fatalf("terms(%q) gave %q", s, term)
			}
		}
	})
}

// TestPlaces: the words that may name where a request is to be done.
func TestPlaces(t *testing.T) {
	for q, want := range map[string][]string{
		"open a bug in Linear":                {"linear"},
		"post it on slack please":             {"slack"},
		"file an issue on GitHub":             {"github", "git", "hub"},
		"Create a GitHub issue":               {"github", "git", "hub"},
		"forget everything about the project": nil,
		"send a POST request to the API":      nil,
		"Show me the files":                   nil,
		"search HubSpot for Jane":             {"hubspot", "hub", "spot", "jane"},
	} {
		assert.Equal(t, want, places(q), q)
	}
}
