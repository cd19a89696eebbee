package otc

import (
	"testing"
	"time"

	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func fingerprintOf(t *testing.T, toolID, input string) string {
	t.Helper()
	d, err := jsonparse.Parse([]byte(input))
	require.NoError(t, err)
	defer jsonparse.Release(d)
	_, fp := keyAndFingerprint(nil, "c", toolID, d, 0)
	return fp
}

func TestFingerprintNormalisesInput(t *testing.T) {
	same := [][]string{
		{`{"a":1,"b":"x"}`, `{ "b" : "x", "a" : 1 }`, "{\n\t\"a\": 1.0,\n\"b\": \"\\u0078\"}", `{"a":1e0,"b":"x"}`, `{"a":10e-1,"b":"x"}`},
		{`{"n":-0}`, `{"n":0}`, `{"n":0.0}`},
		{`{"list":[1,{"y":2,"x":1}]}`, `{"list":[1.0,{"x":1,"y":2}]}`},
		{`{"big":123456789012345678901234567890}`, `{"big":123456789012345678901234567890}`},
		{`{"esc":"\u00e9\n"}`, "{\"esc\":\"\u00e9\\n\"}"},
		{`{}`, ` { } `},
	}
	for _, group := range same {
		want := fingerprintOf(t, "T.t@1.0.0", group[0])
		for _, in := range group[1:] {
			assert.Equal(t, want, fingerprintOf(t, "T.t@1.0.0", in), "%s and %s", group[0], in)
		}
	}
	different := []string{
		`{}`, `{"a":1}`, `{"a":2}`, `{"a":"1"}`, `{"a":1.5}`, `{"a":true}`, `{"a":false}`, `{"a":null}`,
		`{"a":[]}`, `{"a":{}}`, `{"a":[1,2]}`, `{"a":[2,1]}`, `{"b":1}`, `{"a":1,"b":1}`, `{"ab":1}`,
		`{"a":"b","c":"d"}`, `{"a":"bc","":"d"}`, `{"a":[[]]}`, `{"a":[{}]}`, `{"a":12345678901234567890}`,
		`{"a":12345678901234567891}`,
	}
	seen := map[string]string{}
	for _, in := range different {
		fp := fingerprintOf(t, "T.t@1.0.0", in)
		if prev, ok := seen[fp]; ok {
			t.Errorf("%s and %s have one fingerprint", prev, in)
		}
		seen[fp] = in
	}
	assert.NotEqual(t, fingerprintOf(t, "T.t@1.0.0", `{}`), fingerprintOf(t, "T.t@2.0.0", `{}`), "the tool version counts")
	assert.Equal(t, "T.t@1.0.0", fingerprintTool(fingerprintOf(t, "T.t@1.0.0", `{"a":1}`)))
}

func TestIdempotencyKeyScopes(t *testing.T) {
	keys := map[string]string{}
	for name, id := range map[string]*Identity{
		"anonymous":     nil,
		"alice":         {Method: "api_key", Name: "alice"},
		"alice by jwt":  {Method: "jwt", Name: "alice"},
		"alice, iss a":  {Method: "jwt", Name: "alice", Claims: map[string]any{"iss": "https://a.example"}},
		"alice, iss b":  {Method: "jwt", Name: "alice", Claims: map[string]any{"iss": "https://b.example"}},
		"crafted name":  {Method: "api_key", Name: "alice/call"},
		"crafted parts": {Method: "api_key5:alice", Name: ""},
	} {
		k := idempotencyKeyOf(t, id, "call")
		if other, ok := keys[k]; ok {
			t.Errorf("%s and %s share the key %q", name, other, k)
		}
		keys[k] = name
	}
	assert.NotEqual(t, idempotencyKeyOf(t, nil, "a"), idempotencyKeyOf(t, nil, "b"))
}

func idempotencyKeyOf(t *testing.T, id *Identity, callID string) string {
	t.Helper()
	key, _ := keyAndFingerprint(id, callID, "T.t@1.0.0", emptyInput, 0)
	return key
}

func TestOutcomeEncodingRoundTrip(t *testing.T) {
	for _, res := range []CallResult{
		{Duration: 1500 * time.Microsecond, Value: []byte(`{"sum":3}`)},
		{Duration: 0},
		{Duration: time.Second, Value: []byte(`[{"type":"text","text":"hi"}]`), Content: true},
		{Duration: 2, Error: &ToolError{Message: "No", DeveloperMessage: "dev", AdditionalPromptContent: "try x", RetryAfter: 3 * time.Second}},
		{Duration: 3, Error: &ToolError{Message: "boom"}, Unexpected: true},
		{Duration: 4, Error: &ToolError{Message: "late", CanRetry: true}, outcome: OutcomeTimeout},
	} {
		b := encodeOutcome(&res)
		got, err := decodeOutcome(b)
		require.NoError(t, err)
		assert.Equal(t, res, got)
		// Every truncation and any trailing byte is refused, not
		// misread.
		for i := range len(b) {
			_, err := decodeOutcome(b[:i])
			assert.ErrorIs(t, err, errBadOutcome, "truncated at %d", i)
		}
		_, err = decodeOutcome(append(b, 0))
		assert.ErrorIs(t, err, errBadOutcome)
	}
}

func FuzzDecodeOutcome(f *testing.F) {
	f.Add(encodeOutcome(&CallResult{Value: []byte(`1`)}))
	f.Add(encodeOutcome(&CallResult{Error: &ToolError{Message: "m"}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		res, err := decodeOutcome(b)
		if err != nil {
			return
		}
		// What decodes survives a round trip unchanged.
		again, err := decodeOutcome(encodeOutcome(&res))
		require.NoError(t, err)
		assert.Equal(t, res, again)
	})
}
