package a2a_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/a2a"
)

// events splits a Server-Sent Events body into its data payloads.
func events(t *testing.T, a answer) []json.RawMessage {
	t.Helper()
	assert.Equal(t, "text/event-stream", a.header.Get("Content-Type"), "%s", a.body)
	var out []json.RawMessage
	sc := bufio.NewScanner(bytes.NewReader(a.body))
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			require.True(t, json.Valid([]byte(data)), data)
			out = append(out, json.RawMessage(data))
		}
	}
	return out
}

// TestStreaming: SendStreamingMessage (JSON-RPC) and POST /message:stream
// (HTTP+JSON) stream a task's call as the task at WORKING, a WORKING
// status update per progress report, the artifact, and the final status;
// a call answered within its message as that one message; a message the
// call refuses before the tool runs is an ordinary error.
func TestStreaming(t *testing.T) {
	s := newServer(t, nil)
	msg := func(id string) string {
		return `{"messageId":"` + id + `","role":"ROLE_USER","parts":[{"data":{"tool":"Job_Steps","input":{}}}]}`
	}

	rpc := s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":9,"method":"SendStreamingMessage","params":{"message":`+msg("s1")+`}}`)
	require.Equal(t, http.StatusOK, rpc.status, "%s", rpc.body)
	var results []json.RawMessage
	for _, e := range events(t, rpc) {
		var env struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result"`
		}
		require.NoError(t, json.Unmarshal(e, &env))
		assert.Equal(t, "2.0", env.JSONRPC)
		assert.JSONEq(t, "9", string(env.ID))
		results = append(results, env.Result)
	}
	rest := s.post(t, "/message:stream", a2a.Version10, `{"message":`+msg("s1-rest")+`}`)
	require.Equal(t, http.StatusOK, rest.status, "%s", rest.body)

	for name, got := range map[string][]json.RawMessage{"jsonrpc": results, "rest": events(t, rest)} {
		require.Len(t, got, 5, "%s: %s", name, got)
		var first struct {
			Task struct {
				ID     string `json:"id"`
				Status struct {
					State string `json:"state"`
				} `json:"status"`
			} `json:"task"`
		}
		require.NoError(t, json.Unmarshal(got[0], &first))
		assert.Equal(t, "TASK_STATE_WORKING", first.Task.Status.State, name)
		type update struct {
			StatusUpdate *struct {
				TaskID string `json:"taskId"`
				Status struct {
					State   string `json:"state"`
					Message *struct {
						Parts []struct {
							Text string `json:"text"`
						} `json:"parts"`
					} `json:"message"`
				} `json:"status"`
			} `json:"statusUpdate"`
			ArtifactUpdate *struct {
				TaskID   string `json:"taskId"`
				Artifact struct {
					Parts []json.RawMessage `json:"parts"`
				} `json:"artifact"`
				LastChunk bool `json:"lastChunk"`
			} `json:"artifactUpdate"`
		}
		var u [4]update
		for i := range u {
			require.NoError(t, json.Unmarshal(got[i+1], &u[i]), string(got[i+1]))
		}
		require.NotNil(t, u[0].StatusUpdate, name)
		assert.Equal(t, "TASK_STATE_WORKING", u[0].StatusUpdate.Status.State)
		assert.Equal(t, "1 of 2: first step", u[0].StatusUpdate.Status.Message.Parts[0].Text)
		assert.Equal(t, first.Task.ID, u[0].StatusUpdate.TaskID)
		require.NotNil(t, u[1].StatusUpdate, name)
		assert.Equal(t, "2 of 2", u[1].StatusUpdate.Status.Message.Parts[0].Text)
		require.NotNil(t, u[2].ArtifactUpdate, name)
		assert.True(t, u[2].ArtifactUpdate.LastChunk)
		assert.JSONEq(t, `{"data":"done"}`, string(u[2].ArtifactUpdate.Artifact.Parts[0]))
		require.NotNil(t, u[3].StatusUpdate, name)
		assert.Equal(t, "TASK_STATE_COMPLETED", u[3].StatusUpdate.Status.State)
	}

	// A call that runs within its message is streamed as its one answer.
	plain := events(t, s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":12,"method":"SendStreamingMessage","params":{"message":{"messageId":"s4","role":"ROLE_USER","parts":[{"data":{"tool":"Calculator_Add","input":{"a":1,"b":1}}}]}}}`))
	require.Len(t, plain, 1)
	assert.Contains(t, string(plain[0]), `"message":{`)
	assert.Contains(t, string(plain[0]), `{"data":2}`)

	// Refused before the tool runs: an ordinary JSON-RPC error, no stream.
	bad := s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":10,"method":"SendStreamingMessage","params":{"message":{"messageId":"s2","role":"ROLE_USER","parts":[{"data":{"tool":"Calculator_Add","input":{"a":"x","b":1}}}]}}}`)
	assert.Equal(t, "application/json", bad.header.Get("Content-Type"))
	r := decodeRPC(t, bad)
	require.NotNil(t, r.Error)
	assert.Equal(t, -32602, r.Error.Code)

	// 0.3: kind-tagged events, the last one final.
	old := s.post(t, "/", "", `{"jsonrpc":"2.0","id":11,"method":"message/stream","params":{"message":{"kind":"message","messageId":"s3","role":"user","parts":[{"kind":"data","data":{"tool":"Job_Steps","input":{}}}]}}}`)
	evs := events(t, old)
	require.Len(t, evs, 5)
	var last struct {
		Result struct {
			Kind   string `json:"kind"`
			Final  bool   `json:"final"`
			Status struct {
				State string `json:"state"`
			} `json:"status"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(evs[4], &last))
	assert.Equal(t, "status-update", last.Result.Kind)
	assert.True(t, last.Result.Final)
	assert.Equal(t, "completed", last.Result.Status.State)
}
