package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSealerRoundTrip(t *testing.T) {
	t.Parallel()
	s := newSealer([][]byte{bytes.Repeat([]byte{7}, RequestStateKeySize)}, 0)
	assert.Equal(t, DefaultRequestStateTTL, s.ttl)
	st := &roundState{Tool: "T", Args: argsDigest([]byte(`{"b":2, "a":1}`)), Expires: time.Now().Unix() + 60,
		Answers: map[string]answer{"q1": {Digest: "d", Answer: json.RawMessage(`{"action":"accept"}`)}}, Asked: map[string]string{"q2": "e"}}
	text, err := s.seal(st)
	require.NoError(t, err)
	got, why := s.open(text)
	require.Empty(t, why)
	assert.Equal(t, st, got)
	assert.Equal(t, argsDigest([]byte(`{"a":1,"b":2}`)), got.Args, "the arguments' digest ignores spacing and order")
	assert.Equal(t, argsDigest(nil), argsDigest([]byte(`{}`)))

	// Every byte matters.
	raw, _ := base64.RawURLEncoding.DecodeString(text)
	for i := range raw {
		c := bytes.Clone(raw)
		c[i] ^= 1
		_, why := s.open(base64.RawURLEncoding.EncodeToString(c))
		assert.NotEmpty(t, why, "byte %d flipped", i)
	}
	_, why = s.open(strings.Repeat("A", MaxRequestStateBytes+1))
	assert.Contains(t, why, "is longer than")

	big := &roundState{Answers: map[string]answer{"q1": {Answer: json.RawMessage(`"` + strings.Repeat("x", MaxRequestStateBytes) + `"`)}}}
	_, err = s.seal(big)
	assert.ErrorContains(t, err, "more than the 131072 allowed")
}

// FuzzRequestState opens whatever a client sends as requestState: it must
// never panic, and never open anything but what the key sealed.
func FuzzRequestState(f *testing.F) {
	s := newSealer([][]byte{bytes.Repeat([]byte{9}, RequestStateKeySize)}, time.Minute)
	valid, err := s.seal(&roundState{Tool: "T", Expires: 1})
	require.NoError(f, err)
	for _, seed := range []string{valid, "", "A", valid + "-TAMPERED", valid[:len(valid)-1], strings.Repeat("_", 40)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		st, why := s.open(text)
		if st == nil {
			require.NotEmpty(t, why)
			return
		}
		require.Empty(t, why)
		require.Equal(t, "T", st.Tool, "only the sealed state opens")
	})
}
