package client

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/otcgo/otc/internal/a2awire"
)

// agreeMessage checks readAnswerMessage against encoding/json reading raw
// into an a2awire.Message: where both read it, the same parts and
// metadata.
func agreeMessage(t *testing.T, raw string) (ours, theirs bool) {
	t.Helper()
	if foldedMessageName(raw) {
		t.Skip("encoding/json matches names regardless of case; readAnswerMessage exactly")
	}
	got, err := readAnswerMessage([]byte(raw))
	var ref a2awire.Message
	rerr := json.Unmarshal([]byte(raw), &ref)
	if err != nil || rerr != nil {
		return err == nil, rerr == nil
	}
	assert.Equal(t, "message", got.Kind, raw)
	assert.Equal(t, len(ref.Parts), len(got.Parts), raw)
	if len(ref.Parts) == len(got.Parts) {
		for i, p := range ref.Parts {
			q := got.Parts[i]
			assert.Equal(t, p.Kind, q.Kind, raw)
			assert.Equal(t, p.IsText, q.IsText, raw)
			assert.Equal(t, p.Text, q.Text, raw)
			assert.Equal(t, string(p.Data), string(q.Data), raw)
		}
	}
	assert.Equal(t, ref.Parts == nil, got.Parts == nil, raw)
	assert.Equal(t, string(ref.Metadata), string(got.Metadata), raw)
	return true, true
}

// foldedMessageName reports whether a message, or a part in it, has a
// member whose name is one readAnswerMessage reads but in another case.
func foldedMessageName(raw string) bool {
	return hasFoldedName(raw, "parts", "kind", "messageId", "contextId", "taskId", "role", "parts", "metadata", "text", "data")
}

func TestReadAnswerMessageAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range []struct {
		raw          string
		ours, theirs bool
	}{
		{`{"messageId":"m","contextId":"c","role":"ROLE_AGENT","parts":[{"data":15},{"text":"15"}],"metadata":{"io.github.otcgo/outcome":"succeeded"}}`, true, true},
		{`{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"data","data":{"result":{"a":[1,"x"]}}},{"kind":"text","text":"a\nb\u00e9"}]}`, true, true},
		{`{"parts":[null,{"text":null},{"data":null},{"text":"a","text":"b"},{"text":"a","text":null}],"metadata":null}`, true, true},
		{`{"parts":null,"parts":[{"data":1}],"messageId":null,"unknown":{"x":[true]}}`, true, true},
		{`{"parts":[]}`, true, true},
		{`{}`, true, true},
		{`{"messageId":3,"parts":[]}`, false, false},
		{`{"role":{},"parts":[]}`, false, false},
		{`{"parts":{}}`, false, false},
		{`{"parts":[1]}`, false, false},
		{`{"parts":[{"text":1}]}`, false, false},
		{`{"parts":[{"kind":[]}]}`, false, false},
		{`[]`, false, false},
		{`{"parts":[],}`, false, false},
	} {
		ours, theirs := agreeMessage(t, c.raw)
		assert.Equal(t, c.ours, ours, "readAnswerMessage(%s)", c.raw)
		assert.Equal(t, c.theirs, theirs, "encoding/json on %s", c.raw)
	}
}

func FuzzReadAnswerMessage(f *testing.F) {
	for _, s := range []string{
		`{"messageId":"m","contextId":"c","role":"ROLE_AGENT","parts":[{"data":15},{"text":"15"}],"metadata":{"io.github.otcgo/outcome":"succeeded"}}`,
		`{"kind":"message","parts":[null,{"kind":"text","text":"x"}]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		ours, theirs := agreeMessage(t, s) // no panic; where both read it, the same parts
		if ours && !theirs {
			t.Fatalf("readAnswerMessage reads what encoding/json refuses: %s", s)
		}
	})
}
