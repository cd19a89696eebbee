package search

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file turns text into the terms the index holds: words split at
// anything that is not a letter or a digit and inside identifiers
// (get_file_contents, listIssues, HTTPServer, read-file.v2), folded to
// lower case, with the commonest English endings taken off so that
// "files" finds "file" and "searching" "search", and the words too common
// to tell tools apart left out.

// maxTermBytes bounds one term: a longer run of letters is cut there.
const maxTermBytes = 64

// terms appends the terms of s to dst.
func terms(dst []string, s string) []string {
	var word []rune
	flush := func() {
		if len(word) == 0 {
			return
		}
		for _, part := range splitCase(word) {
			lower := strings.ToLower(string(part))
			if stopWords[lower] {
				continue
			}
			if t := stem(lower); t != "" {
				if len(t) > maxTermBytes {
					t = t[:maxTermBytes]
					for !utf8.ValidString(t) {
						t = t[:len(t)-1]
					}
				}
				dst = append(dst, t)
			}
		}
		word = word[:0]
	}
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			word = append(word, r)
			continue
		}
		flush()
	}
	flush()
	return dst
}

// compounds returns the words two neighbouring words of s make when
// written as one ("to do" todo, "who am i" whoami's parts, "data base"
// database), and a word written in changes of case whole ("GitHub"
// github, beside git and hub), stemmed; a search looks for those the
// catalog has, since a tool's name often writes as one word what a person
// writes as two. At most maxQueryTerms of them.
func compounds(s string) []string {
	var words, out []string
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) > maxTermBytes {
			continue
		}
		lower := strings.ToLower(w)
		words = append(words, lower)
		if len(out) < maxQueryTerms && len(splitCase([]rune(w))) > 1 {
			out = append(out, stem(lower))
		}
	}
	for i := 0; i+1 < len(words) && len(out) < maxQueryTerms; i++ {
		out = append(out, stem(words[i]+words[i+1]))
		if i+2 < len(words) && len(out) < maxQueryTerms {
			out = append(out, stem(words[i]+words[i+1]+words[i+2]))
		}
	}
	// "what's" makes whats, stemmed what: no word to search for.
	return slices.DeleteFunc(out, func(t string) bool { return stopWords[t] })
}

// places returns the words of s that may name where a request is to be
// done: a word written with a capital letter after the first word ("…
// in Linear", "GitHub's"), and a word after in, on, at, from, with,
// using, via or through ("post it on slack"), stemmed, whole and in its
// parts. A search prefers the tools of a server so named.
func places(s string) []string {
	var out []string
	add := func(w string) {
		if len(out) < maxQueryTerms {
			out = append(out, stem(strings.ToLower(w)))
		}
	}
	prev := ""
	for i, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) > maxTermBytes {
			continue
		}
		r, _ := utf8.DecodeRuneInString(w)
		// A capital letter, first or inside, in a word with lower case
		// letters too (not an acronym such as API).
		lower := strings.IndexFunc(w, unicode.IsLower) >= 0
		capital := lower && (i > 0 && unicode.IsUpper(r) || strings.IndexFunc(w[1:], unicode.IsUpper) >= 0)
		if capital || placeWords[strings.ToLower(prev)] {
			add(w)
			if parts := splitCase([]rune(w)); len(parts) > 1 {
				for _, p := range parts {
					add(string(p))
				}
			}
		}
		prev = w
	}
	return out
}

// placeWords are the words after which a request names a place.
var placeWords = map[string]bool{"in": true, "on": true, "at": true, "from": true, "with": true, "using": true, "via": true, "through": true}

// splitCase splits an identifier at its changes of case: "listIssues" is
// list, Issues; "HTTPServer" HTTP, Server; "v2Beta" v2, Beta. Digits stay
// with what they follow.
func splitCase(w []rune) [][]rune {
	var parts [][]rune
	start := 0
	for i := 1; i < len(w); i++ {
		prev, cur := w[i-1], w[i]
		next := rune(0)
		if i+1 < len(w) {
			next = w[i+1]
		}
		lowerToUpper := !unicode.IsUpper(prev) && unicode.IsLetter(prev) && unicode.IsUpper(cur)
		digitToUpper := unicode.IsDigit(prev) && unicode.IsUpper(cur)
		acronymEnd := unicode.IsUpper(prev) && unicode.IsUpper(cur) && unicode.IsLower(next)
		if lowerToUpper || digitToUpper || acronymEnd {
			parts = append(parts, w[start:i])
			start = i
		}
	}
	return append(parts, w[start:])
}

// stem takes off the commonest English inflections: plurals, -ing, -ed.
// It is deliberately light: a tool's name is often one of these words,
// and the same stem is taken from a query and from the tools.
func stem(t string) string {
	switch {
	case len(t) > 4 && strings.HasSuffix(t, "ies"):
		return t[:len(t)-3] + "y"
	case len(t) > 4 && strings.HasSuffix(t, "sses"):
		return t[:len(t)-2]
	case len(t) > 5 && strings.HasSuffix(t, "ing"):
		return undouble(t[:len(t)-3])
	case len(t) > 4 && strings.HasSuffix(t, "ed") && !strings.HasSuffix(t, "eed"):
		return undouble(t[:len(t)-2])
	case len(t) > 3 && strings.HasSuffix(t, "es") && strings.ContainsRune("sxz", rune(t[len(t)-3])):
		return t[:len(t)-2]
	case len(t) > 3 && strings.HasSuffix(t, "s") && !strings.HasSuffix(t, "ss") && !strings.HasSuffix(t, "us"):
		return t[:len(t)-1]
	}
	return t
}

// undouble takes one letter off a doubled consonant at the end, as
// "running" leaves "runn".
func undouble(t string) string {
	if n := len(t); n > 2 && t[n-1] == t[n-2] && !strings.ContainsRune("aeiouls", rune(t[n-1])) {
		return t[:n-1]
	}
	return t
}

// stopWords are left out of queries and tools alike.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the and or of to in on for with by from at as is are be been was were
		it its this that these those i me my we our you your he she they them their what which who whom how
		do does did can could would should will shall may might must not no so than then there here about into
		over under all any some each every such only own same too very just also use using used tool
		s t d ll re ve m`) { // the last, what is left of a contraction (what's, don't, we'll)
		m[w] = true
	}
	return m
}()

// asking are words a request is made with rather than words of what it
// asks for ("show me", "tell me", "I want"): a query's word among them
// counts at askingWeight, so that a tool named after one (git's "show")
// does not take every request that begins so. Their related words still
// search, at their weight.
var asking = map[string]bool{"show": true, "tell": true, "give": true, "see": true, "let": true, "please": true,
	"want": true, "need": true, "know": true, "like": true, "help": true}

// askingWeight is how much a word of asking counts.
const askingWeight = 0.3

// related are words a user writes for what a tool's name or description
// says in others: "save" for write, "show" for read, "folder" for
// directory. A query's word also searches for these, at half its weight,
// so that a plain request finds the tool a server named in its own terms.
// Each list is of words as terms gives them (stemmed).
var related = func() map[string][]string {
	groups := [][]string{
		{"write", "save", "store", "put"},
		{"read", "show", "view", "display", "open", "load", "content"},
		{"get", "fetch", "retrieve", "obtain", "look"},
		{"delete", "remove", "erase", "drop", "destroy", "forget"},
		{"create", "make", "new", "add", "open"},
		{"update", "modify", "change", "edit", "set"},
		{"search", "find", "lookup", "query"},
		{"list", "enumerate", "all"},
		{"directory", "folder", "dir"},
		{"text", "content", "string"},
		{"send", "post", "message"},
		{"run", "execute", "exec", "start", "launch"},
		{"stop", "kill", "terminate", "end"},
		{"forecast", "weather"},
		{"sum", "add", "plus", "total"},
		{"url", "link", "address", "website", "web", "page"},
		{"issue", "ticket", "bug"},
		{"pull", "pr", "merge"},
		{"email", "mail"},
		{"image", "picture", "photo", "screenshot"},
		{"rename", "move"},
		{"attach", "attachment"},
		{"navigate", "go", "visit", "browse", "open"},
		{"type", "fill", "enter", "input"},
		{"dialog", "alert", "popup"},
		{"javascript", "js", "script", "evaluate"},
		{"coordinate", "geocode", "latitude", "longitude"},
		{"far", "distance"},
		{"meeting", "event", "appointment", "calendar"},
		{"todo", "task"},
		{"remember", "memory", "memorize", "recall"},
		{"watch", "monitor"},
		{"repo", "repository"},
		{"copy", "duplicate", "clone"},
		{"tree", "structure", "hierarchy"},
		{"history", "log"},
		{"error", "exception", "crash", "failure", "fail"},
		{"chart", "graph", "plot"},
		{"user", "member", "people", "person", "account"},
		{"deploy", "release", "ship"},
		{"price", "cost", "pricing"},
		{"vector", "embedding"},
		{"doc", "documentation"},
		{"click", "press", "tap"},
		{"multiple", "several", "many", "batch", "bulk"},
	}
	m := map[string][]string{}
	for _, g := range groups {
		var stems []string
		for _, w := range g {
			stems = append(stems, stem(w))
		}
		for i, w := range stems {
			for j, other := range stems {
				if i != j && !slices.Contains(m[w], other) {
					m[w] = append(m[w], other)
				}
			}
		}
	}
	return m
}()
