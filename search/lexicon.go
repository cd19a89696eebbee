package search

import (
	_ "embed"
	"slices"
	"strings"
	"sync"
)

// The words people write for one another, beyond the hand-made related
// list of tokens.go: the groups of wordnet.txt, generated from WordNet 3.0
// by internal/wordnetgen (go generate), whose licence wordnet-LICENSE
// carries. A query's word also searches for the words of its groups, at
// lexiconWeight, the most common senses first.

//go:generate go run ../internal/wordnetgen -dict /usr/share/wordnet -out wordnet.txt

//go:embed wordnet.txt
var wordnetText string

// lexiconWeight is how much a word WordNet relates to a query's word
// counts; maxLexical bounds how many such words one word searches for.
var lexiconWeight = 0.3

const maxLexical = 8

// lexicon returns the stemmed words WordNet relates to each stemmed
// word, read from wordnet.txt on first use.
var lexicon = sync.OnceValue(func() map[string][]string {
	m := map[string][]string{}
	for line := range strings.Lines(wordnetText) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		var group, phrases []string
		for _, w := range strings.Fields(line) {
			if first, second, ok := strings.Cut(w, "_"); ok {
				phrases = append(phrases, phrase(first, second))
				continue
			}
			if t := stem(w); !stopWords[t] && !slices.Contains(group, t) {
				group = append(group, t)
			}
		}
		// A phrase ("roll back") finds the words of its group; no tool's
		// words are phrases, so no word finds a phrase.
		for _, a := range append(group, phrases...) {
			for _, b := range group {
				if a != b && len(m[a]) < maxLexical && !slices.Contains(m[a], b) && !slices.Contains(related[a], b) {
					m[a] = append(m[a], b)
				}
			}
		}
	}
	return m
})

// phrase is the key of a phrase of two words in the lexicon: each
// stemmed, a space between ("rolled back" is "roll back").
func phrase(first, second string) string {
	return stem(first) + " " + stem(second)
}
