package client

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/internal/jsonparse"
)

// refAnswer is a tools/call result as encoding/json reads it: what
// readCallAnswer must agree with.
type refAnswer struct {
	ResultType     string                     `json:"resultType"`
	InputRequests  map[string]json.RawMessage `json:"inputRequests"`
	RequestState   *string                    `json:"requestState"`
	TaskID         string                     `json:"taskId"`
	Status         string                     `json:"status"`
	PollIntervalMs int64                      `json:"pollIntervalMs"`
	Content        []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	Structured json.RawMessage            `json:"structuredContent"`
	IsError    bool                       `json:"isError"`
	Meta       map[string]json.RawMessage `json:"_meta"`
}

// agree checks readCallAnswer against encoding/json on raw: where both
// read it, the same members.
func agree(t *testing.T, raw string) (ours, theirs bool) {
	t.Helper()
	if foldedName(raw) {
		t.Skip("encoding/json matches names regardless of case; readCallAnswer exactly")
	}
	got, err := readCallAnswer([]byte(raw))
	var ref refAnswer
	rerr := json.Unmarshal([]byte(raw), &ref)
	if err != nil || rerr != nil {
		return err == nil, rerr == nil
	}
	assert.Equal(t, ref.ResultType, got.ResultType, raw)
	assert.Equal(t, ref.InputRequests, got.InputRequests, raw)
	assert.Equal(t, ref.RequestState, got.RequestState, raw)
	assert.Equal(t, ref.TaskID, got.TaskID, raw)
	assert.Equal(t, ref.Status, got.Status, raw)
	assert.Equal(t, ref.PollIntervalMs, got.PollIntervalMs, raw)
	assert.Equal(t, ref.IsError, got.IsError, raw)
	if string(ref.Structured) != "null" {
		assert.Equal(t, string(ref.Structured), string(got.Structured), raw)
	}
	texts, terr := got.texts()
	if terr == nil {
		var want []string
		for _, c := range ref.Content {
			if c.Type == "text" {
				want = append(want, c.Text)
			}
		}
		assert.Equal(t, want, texts, raw)
	}
	for k, v := range ref.Meta {
		assert.Equal(t, string(v), string(memberOf(got.Meta, k)), raw)
	}
	return true, true
}

// foldedName reports whether an object, or a content block in it, has a
// member whose name is one readCallAnswer reads but in another case.
func foldedName(raw string) bool {
	return hasFoldedName(raw, "content", "resultType", "inputRequests", "requestState", "taskId", "status", "pollIntervalMs", "content", "structuredContent", "isError", "_meta", "type", "text")
}

// hasFoldedName reports whether the object raw, or an object in its array
// member nested, has a member named as one of names but in another case:
// encoding/json reads it as that member, the one-pass readers do not.
func hasFoldedName(raw, nested string, names ...string) bool {
	folded := false
	var walk func(v []byte)
	walk = func(v []byte) {
		jsonparse.EachMember(v, func(name, val []byte) bool {
			for _, n := range names {
				if string(name) != n && strings.EqualFold(string(name), n) {
					folded = true
				}
			}
			if string(name) == nested {
				jsonparse.EachElement(val, func(e []byte) bool { walk(e); return true })
			}
			return true
		})
	}
	walk([]byte(raw))
	return folded
}

func TestReadCallAnswerAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range []struct {
		raw          string
		ours, theirs bool
	}{
		{`{"content":[{"type":"text","text":"3"}],"structuredContent":{"result":3}}`, true, true},
		{`{"content":[{"type":"text","text":"a\nb\u00e9"},{"type":"image","data":"x"},null,{"type":"text","text":"c"}]}`, true, true},
		{`{"isError":true,"content":[{"type":"text","text":"no"}],"_meta":{"io.github.otcgo/error":{"code":"INVALID_INPUT"}}}`, true, true},
		{`{"resultType":"task","taskId":"t1","status":"working","pollIntervalMs":250}`, true, true},
		{`{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create"}},"requestState":"s"}`, true, true},
		{`{"resultType":null,"taskId":null,"isError":null,"structuredContent":null,"_meta":null,"requestState":null,"content":null}`, true, true},
		{`{"status":"a","status":"b","pollIntervalMs":1,"pollIntervalMs":2}`, true, true},
		{`{"pollIntervalMs":1e3}`, false, false},
		{`{"pollIntervalMs":1.5}`, false, false},
		{`{"isError":"yes"}`, false, false},
		{`{"resultType":3}`, false, false},
		{`{"_meta":[1]}`, false, false},
		{`{"content":{}}`, false, false},
		{`{"inputRequests":[]}`, false, false},
		{`[]`, false, false},
		{`{"a":1,}`, false, false},
		{`{}`, true, true},
	} {
		ours, theirs := agree(t, c.raw)
		assert.Equal(t, c.ours, ours, "readCallAnswer(%s)", c.raw)
		assert.Equal(t, c.theirs, theirs, "encoding/json on %s", c.raw)
	}
	// A content block of the wrong shape fails the result when its text
	// is needed (no structured content), as encoding/json fails it always.
	a, err := readCallAnswer([]byte(`{"content":[{"type":1}]}`))
	require.NoError(t, err)
	_, err = a.result("id", nil)
	assert.Error(t, err)
}

func FuzzReadCallAnswer(f *testing.F) {
	for _, s := range []string{`{"content":[{"type":"text","text":"3"}],"structuredContent":{"result":3}}`, `{"resultType":"task","taskId":"t","pollIntervalMs":5}`, `{"isError":true,"_meta":{"k":1}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		agree(t, s) // no panic; where both read it, the same members
		if a, err := readCallAnswer([]byte(s)); err == nil {
			_, _ = a.result("id", []byte(s))
		}
	})
}
