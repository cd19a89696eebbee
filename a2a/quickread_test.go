package a2a

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/internal/jsonparse"
)

// quickSeeds are requests readQuick reads (read true) and requests it
// leaves to the whole-document readers (read false).
var quickSeeds = []struct {
	body string
	read bool
}{
	{`{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m-7","role":"ROLE_USER","parts":[{"data":{"tool":"Calculator_Add","input":{"a":10,"b":5}}}]}}}`, true},
	{` { "id" : "x-1" , "method":"message/send" ,"jsonrpc":"2.0", "params":{"message":{"kind":"message","messageId":"m","contextId":"c","role":"user","parts":[ {"kind":"data","data":{"input":{"a":{"b":[1,2,{}]}},"tool":"Calculator_Add"}} ]}}} ` + "\n", true},
	{`{"jsonrpc":"2.0","id":-1.5e3,"method":"SendMessage","params":{"message":{"messageId":"é","parts":[{"data":{"tool":"T","input":{}}}]}}}`, true},
	// Left to the document readers.
	{`{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m","parts":[{"data":{"tool":"T","input":{"a":1,"a":2}}}]}}}`, false},
	{`{"jsonrpc":"2.0","id":7,"id":8,"method":"SendMessage","params":{"message":{"messageId":"m","parts":[{"data":{"tool":"T","input":{}}}]}}}`, false},
	{`{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m\u0041","parts":[{"data":{"tool":"T","input":{}}}]}}}`, false},
	{`{"jsonrpc":"2.0","id":"7\n","method":"SendMessage","params":{"message":{"messageId":"m","parts":[{"data":{"tool":"T","input":{}}}]}}}`, false},
	{`{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":null,"parts":[{"data":{"tool":"T","input":{}}}]}}}`, false},
	{`{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m","taskId":"t","parts":[{"data":{"tool":"T","input":{}}}]}}}`, false},
	{`{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m","parts":[{"data":{"tool":"T","input":{}}}],"metadata":{}}}}`, false},
	{`{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m","parts":[{"data":{"tool":"T","input":{}}}]},"configuration":{"returnImmediately":true}}}`, false},
	{`{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m","parts":[{"text":"hi"},{"data":{"tool":"T","input":{}}}]}}}`, false},
	{`{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m","parts":[{"data":{"tool":"T","input":{}}},{"data":{}}]}}}`, false},
	{`{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m","parts":[{"data":{"tool":"T"}}]}}}`, false},
	{`{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m","parts":[{"data":{"tool":"T","input":null}}]}}}`, false},
	{`{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m","parts":[{"data":{"tool":"T","input":[]}}]}}}`, false},
	{`{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m","parts":[{"data":{"input_responses":{}}}]}}}`, false},
	{`{"jsonrpc":"2.0","id":7,"method":"SendStreamingMessage","params":{"message":{"messageId":"m","parts":[{"data":{"tool":"T","input":{}}}]}}}`, false},
	{`{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m","parts":[{"data":{"tool":"T","input":{}}}]}}} x`, false},
	{`{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m","parts":[{"data":{"tool":"T","input":{}}}]}}`, false},
	{`{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m","parts":[{"data":{"tool":"T","input":{"a":01}}}]}}}`, false},
	{`{"jsonrpc":"1.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m","parts":[{"data":{"tool":"T","input":{}}}]}}}`, false},
	{`{"id":7,"method":"SendMessage","params":{"message":{"messageId":"m","parts":[{"data":{"tool":"T","input":{}}}]}}}`, false},
	{`{"jsonrpc":"2.0","id":true,"method":"SendMessage","params":{"message":{"messageId":"m","parts":[{"data":{"tool":"T","input":{}}}]}}}`, false},
	{`{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m","parts":[]}}}`, false},
}

// TestReadQuick checks which requests readQuick reads, and that what it
// reads is what the document readers read.
func TestReadQuick(t *testing.T) {
	for _, s := range quickSeeds {
		q, ok := readQuick([]byte(s.body))
		assert.Equal(t, s.read, ok, "%s", s.body)
		if ok {
			sameAsDocument(t, []byte(s.body), q)
			jsonparse.Release(q.in.doc)
		} else {
			assert.Nil(t, q.in.doc, "a document kept from a request not read: %s", s.body)
		}
	}
}

// FuzzReadQuick checks that whatever readQuick reads, the document
// readers read alike, and without an error.
func FuzzReadQuick(f *testing.F) {
	for _, s := range quickSeeds {
		f.Add(s.body)
	}
	f.Fuzz(func(t *testing.T, body string) {
		q, ok := readQuick([]byte(body))
		if !ok {
			if q.in.doc != nil {
				t.Fatal("a document kept from a request not read")
			}
			return
		}
		defer jsonparse.Release(q.in.doc)
		sameAsDocument(t, []byte(body), q)
	})
}

// sameAsDocument fails t unless the whole-document readers read body
// without an error, as q.
func sameAsDocument(t *testing.T, body []byte, q quickSend) {
	t.Helper()
	d, err := jsonparse.Parse(body)
	require.NoError(t, err)
	defer jsonparse.Release(d)
	env, id, e := readEnvelope(d)
	require.Nil(t, e)
	assert.Equal(t, string(id), string(q.id))
	assert.Equal(t, env.method, q.method)
	in, e := readSend(d, env.params, sendParamsProblem)
	require.Nil(t, e)
	got, want := q.in, in
	require.GreaterOrEqual(t, want.input, int32(0))
	assert.Equal(t, string(want.doc.Raw(want.input)), string(got.doc.Raw(got.input)))
	for _, p := range d.Elements(want.partsNode) {
		assert.Equal(t, string(d.Raw(d.Member(p, "data"))), string(got.dataRaw))
	}
	got.doc, want.doc, got.input, want.input = nil, nil, 0, 0
	got.partsNode, want.partsNode, got.dataRaw = 0, 0, nil
	assert.Equal(t, want, got)
}
