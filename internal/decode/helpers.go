package decode

import (
	"reflect"
	"strings"
	"time"
)

// durationType is time.Duration, which JSON carries as a string and the
// decoder as nanoseconds.
var durationType = reflect.TypeFor[time.Duration]()

// tagName returns the first comma-separated element of a struct tag value.
func tagName(tag string) string {
	name, _, _ := strings.Cut(tag, ",")
	return name
}

// joinPath names a parameter under its parent for messages: "address.zip".
func joinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// anyList reads a schema keyword whose value is an array.
func anyList(v any) []any {
	l, _ := v.([]any)
	return l
}

// stringList reads a schema keyword whose value is an array of strings,
// skipping anything else in it.
func stringList(v any) []string {
	l := anyList(v)
	out := make([]string, 0, len(l))
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
