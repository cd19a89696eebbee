package mcp

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/caller"
	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/wire"
)

// This file is how a tool asks its caller in protocol version 2026-07-28,
// which keeps no connection open for a server-to-client request: the
// multi-round-trip requests of SEP-2322. A function that asks a question
// the request does not answer ends the call with an input_required result
// naming its questions (inputRequests) and a requestState; the client
// calls tools/call again with the same arguments, its answers
// (inputResponses) and the requestState, and the function runs again,
// this time finding its answers.
//
// The server keeps nothing between the rounds: requestState carries the
// answers of the earlier rounds and what the last round asked, sealed
// with AES-256-GCM under a key the replicas share
// (Options.RequestStateKeys), bound to the tool, its arguments and the
// caller, and with an expiry. Any replica that has the key can take the
// next round.

const (
	// DefaultRequestStateTTL is how long a requestState is accepted after
	// it was issued, when Options.RequestStateTTL is zero: long enough for
	// a person to answer a question.
	DefaultRequestStateTTL = 15 * time.Minute
	// MaxRequestStateBytes bounds a requestState, issued or received: the
	// answers a call gathers over its rounds must fit in it.
	MaxRequestStateBytes = 128 << 10
	// RequestStateKeySize is the size of a key of
	// Options.RequestStateKeys: 32 bytes, for AES-256.
	RequestStateKeySize = 32
)

// stateAAD binds a sealed state to its use.
var stateAAD = []byte("otc/mcp requestState v1")

// processStateKey is the key a server without Options.RequestStateKeys
// seals with: random, made once per process.
var processStateKey = sync.OnceValue(func() []byte {
	k := make([]byte, RequestStateKeySize)
	_, _ = rand.Read(k) // never fails (crypto/rand documents it)
	return k
})

// sealer seals and opens requestStates.
type sealer struct {
	keys []sealKey // the first seals; all open
	ttl  time.Duration
}

type sealKey struct {
	id   [4]byte // the first bytes of the key's SHA-256, to find it again
	aead cipher.AEAD
}

// newSealer checks the keys of the options and makes the sealer. It
// panics, naming the culprit, on a key of the wrong size: a setup
// mistake.
func newSealer(keys [][]byte, ttl time.Duration) *sealer {
	if len(keys) == 0 {
		keys = [][]byte{processStateKey()}
	}
	s := &sealer{ttl: ttl}
	if s.ttl <= 0 {
		s.ttl = DefaultRequestStateTTL
	}
	for i, k := range keys {
		if len(k) != RequestStateKeySize {
			panic(fmt.Sprintf("mcp: Options.RequestStateKeys[%d] is %d bytes; each key is %d random bytes (AES-256), the same on every replica", i, len(k), RequestStateKeySize))
		}
		block, _ := aes.NewCipher(k) // 32 bytes: cannot fail
		aead, _ := cipher.NewGCM(block)
		sum := sha256.Sum256(k)
		s.keys = append(s.keys, sealKey{id: [4]byte(sum[:4]), aead: aead})
	}
	return s
}

// roundState is what a requestState holds.
type roundState struct {
	ID      string            `json:"n"` // random: the state is spent under it when used
	Tool    string            `json:"t"`
	Args    string            `json:"h"` // hex SHA-256 of the canonical arguments
	Caller  string            `json:"c,omitempty"`
	Expires int64             `json:"e"` // Unix seconds
	Answers map[string]answer `json:"a,omitempty"`
	Asked   map[string]string `json:"q,omitempty"` // key → digest of the question
}

// answer is an answer a function used, with the digest of its question.
type answer struct {
	Digest string          `json:"d"`
	Answer json.RawMessage `json:"r"`
}

func (s *sealer) seal(st *roundState) (string, error) {
	enc, err := s.sealValue(st, stateAAD)
	if err == nil && len(enc) > MaxRequestStateBytes {
		err = fmt.Errorf("the answers gathered for this call would make a requestState of %d bytes, more than the %d allowed", len(enc), MaxRequestStateBytes)
	}
	return enc, err
}

// sealValue seals v's JSON for the use aad names, which opening must
// name alike: a value sealed for one use is refused for another.
func (s *sealer) sealValue(v any, aad []byte) (string, error) {
	plain, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	k := s.keys[0]
	out := make([]byte, 4+k.aead.NonceSize(), 4+k.aead.NonceSize()+len(plain)+k.aead.Overhead())
	copy(out, k.id[:])
	_, _ = rand.Read(out[4:])
	out = k.aead.Seal(out, out[4:], plain, aad)
	return base64.RawURLEncoding.EncodeToString(out), nil
}

// openValue opens what sealValue sealed for aad into v: false when text
// was not sealed by a key of s for aad, or was altered.
func (s *sealer) openValue(text string, aad []byte, v any) bool {
	raw, err := base64.RawURLEncoding.DecodeString(text)
	if err != nil || len(raw) < 4+12 {
		return false
	}
	for _, k := range s.keys {
		if !bytes.Equal(raw[:4], k.id[:]) {
			continue
		}
		n := k.aead.NonceSize()
		if len(raw) < 4+n {
			return false
		}
		plain, err := k.aead.Open(nil, raw[4:4+n], raw[4+n:], aad)
		return err == nil && json.Unmarshal(plain, v) == nil
	}
	return false
}

// open returns the state sealed in text, or the reason it is refused.
func (s *sealer) open(text string) (*roundState, string) {
	if len(text) > MaxRequestStateBytes {
		return nil, fmt.Sprintf("is longer than the %d bytes a requestState of this server can be", MaxRequestStateBytes)
	}
	if raw, err := base64.RawURLEncoding.DecodeString(text); err != nil || len(raw) < 4+12 {
		return nil, "was not issued by this server or was altered: send back the requestState of the last result as it came"
	}
	var st roundState
	if s.openValue(text, stateAAD, &st) {
		return &st, ""
	}
	return nil, "was not issued by this server or was altered (or was sealed with a key this server does not have: replicas must share Options.RequestStateKeys): send back the requestState of the last result as it came, or call again without it"
}

// round is what one run of a function knows of the call's rounds: the
// answers at hand, and the questions still open. Its callState's mutex
// guards it.
type round struct {
	responses map[string]json.RawMessage // inputResponses of this request
	prior     map[string]answer          // answers of earlier rounds
	asked     map[string]string          // what the last round asked
	seq       int                        // questions named so far
	used      map[string]answer          // answers this run used
	pending   map[string]otc.InputRequest
}

// roundAsker is the Asker of a 2026-07-28 call, which asks in
// input_required rounds: the call's state is what it asks with (its
// capabilities, its round). It holds one pointer, so that it goes into an
// otc.Asker without an allocation.
type roundAsker struct{ *callState }

// Ask asks as the file comment says.
func (a roundAsker) Ask(ctx context.Context, reqs []otc.InputRequest) ([]json.RawMessage, error) {
	s := a.callState
	for _, r := range reqs {
		if len(r.Params) > 0 && (r.Params[0] != '{' || !json.Valid(r.Params)) {
			return nil, fmt.Errorf("mcp: ask: the params of a %s request must be a JSON object", r.Method)
		}
		if err := s.allow(r); err != nil {
			return nil, err
		}
	}
	if _, err := callerOf(ctx, s.request); err != nil {
		return nil, fmt.Errorf("mcp: ask: %w: %w", otc.ErrInputUnsupported, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rd := s.round
	if rd == nil {
		rd = &round{}
		s.round = rd
	}
	answers := make([]json.RawMessage, len(reqs))
	var pending map[string]otc.InputRequest
	for i, r := range reqs {
		key := r.Key
		if key == "" {
			rd.seq++
			key = "q" + strconv.Itoa(rd.seq)
		}
		d := questionDigest(r)
		if a, ok := rd.prior[key]; ok && a.Digest == d {
			answers[i] = a.Answer
		} else if a, ok := rd.responses[key]; ok && rd.asked[key] == d {
			// Only the answer to a question the last round asked, as
			// its requestState records it: an answer sent unasked
			// (a confirmation the user never saw) is not used.
			answers[i] = a
		}
		if answers[i] != nil {
			if rd.used == nil {
				rd.used = map[string]answer{}
			}
			rd.used[key] = answer{Digest: d, Answer: answers[i]}
			continue
		}
		if pending == nil {
			pending = map[string]otc.InputRequest{}
		}
		r.Key = key
		pending[key] = r
	}
	if pending == nil {
		return answers, nil
	}
	if len(rd.pending)+len(pending) > otc.MaxInputRequests {
		return nil, fmt.Errorf("mcp: ask: more than the %d questions a call may have open at once", otc.MaxInputRequests)
	}
	if rd.pending == nil {
		rd.pending = map[string]otc.InputRequest{}
	}
	maps.Copy(rd.pending, pending)
	return nil, &otc.InputRequiredError{Requests: pending}
}

// questionDigest identifies a question, so that an answer is used only
// for the question it answers, should a function ask something else under
// the same key when it runs again.
func questionDigest(r otc.InputRequest) string {
	h := sha256.New()
	h.Write([]byte(r.Method))
	h.Write([]byte{0})
	h.Write(r.Params)
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// argsDigest identifies the arguments of a call, whatever their spacing
// and member order.
func argsDigest(args []byte) string {
	if len(args) == 0 {
		args = []byte("{}")
	}
	var canon []byte
	if d, err := jsonparse.Parse(args); err == nil {
		canon = jsonparse.AppendCanonical(nil, d, 0)
		jsonparse.Release(d)
	} else {
		canon = args
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}

// callerOf names who made a call that came in r (nil on stdio), to bind
// a requestState to them: an error for a caller whose credential names
// no one, who cannot be asked.
func callerOf(ctx context.Context, r *http.Request) (string, error) {
	return caller.Key(ctx, r)
}

// maxInputResponses bounds the answers one request may carry.
const maxInputResponses = 2 * otc.MaxInputRequests

// resume reads the inputResponses and requestState of a 2026-07-28
// request into its round, or returns the error to answer with. subject
// names what the state is bound to: the tool's name, or a prompt's.
func (s *server) resume(ctx context.Context, st *callState, m *message, subject string) *rpcError {
	var responses, stateText []byte
	sc := scanner{jsonparse.Scanner{Data: m.params}}
	sc.members(func(key, val []byte) *rpcError {
		switch string(key) {
		case "inputResponses":
			responses = val
		case "requestState":
			stateText = val
		}
		return nil
	})
	rd := &round{}
	if responses != nil {
		raw := responses
		if len(raw) == 0 || raw[0] != '{' {
			return newError(codeInvalidParams, "Invalid params: inputResponses must be an object mapping the keys of the last result's inputRequests to their answers")
		}
		if err := json.Unmarshal(raw, &rd.responses); err != nil {
			return newError(codeInvalidParams, "Invalid params: inputResponses: %v", err)
		}
		if len(rd.responses) > maxInputResponses {
			return newError(codeInvalidParams, "Invalid params: inputResponses holds %d answers, more than the %d a request may carry", len(rd.responses), maxInputResponses)
		}
		for _, k := range slices.Sorted(maps.Keys(rd.responses)) {
			if v := rd.responses[k]; len(v) == 0 || v[0] != '{' {
				return newError(codeInvalidParams, "Invalid params: inputResponses[%q] must be an object: the result of the request inputRequests[%q] made (an ElicitResult, a CreateMessageResult or a ListRootsResult)",
					wire.Truncate(k, 64), wire.Truncate(k, 64))
			}
		}
	}
	if stateText != nil {
		text, ok := jsonString(stateText)
		if !ok {
			return newError(codeInvalidParams, "Invalid params: requestState must be a string, the one the last input_required result carried")
		}
		state, why := s.sealer.open(text)
		if why != "" {
			return newError(codeInvalidParams, "Invalid params: requestState %s", why)
		}
		switch {
		case time.Now().Unix() > state.Expires:
			return newError(codeInvalidParams, "Invalid params: requestState has expired (it lasts %s); call the tool again without inputResponses and requestState to start over", s.sealer.ttl)
		case state.Tool != subject || state.Args != argsDigest(m.arguments):
			return newError(codeInvalidParams, "Invalid params: requestState belongs to another request: send it with the name and arguments of the request whose result carried it")
		}
		if who, err := callerOf(ctx, st.request); err != nil || state.Caller != who {
			return newError(codeInvalidParams, "Invalid params: requestState belongs to another caller")
		}
		// A requestState answers one request: the round that runs the
		// function with its answers runs once, on whichever replica.
		fresh, err := seam.SpendOnce(ctx, s.reg, "r"+state.ID, m.callID, time.Unix(state.Expires, 0))
		switch {
		case err != nil:
			s.logger.ErrorContext(ctx, "mcp: the record of used requestStates failed; the request was not run", slog.String("error", err.Error()))
			return &rpcError{Code: codeInternalError, Message: "Internal error: the server could not record that this requestState is used, so the request was not run; send it again shortly"}
		case !fresh:
			return newError(codeInvalidParams, "Invalid params: requestState was already used: each one answers one request, and the request that used it has run; call the tool again without inputResponses and requestState to start over")
		}
		rd.prior, rd.asked = state.Answers, state.Asked
	}
	st.round = rd
	return nil
}

// finishRound answers a 2026-07-28 call whose function asked something:
// with an input_required result when questions are open and the function
// ended with an error (as it must, having no answer), with
// invalid-params when an answer did not fit its question. ok is false
// when the call is answered as usual.
func (s *server) finishRound(ctx context.Context, st *callState, m *message, res otc.CallResult) ([]byte, *rpcError, bool) {
	if res.Error == nil {
		return nil, nil, false
	}
	return s.finishAsking(ctx, st, m, m.name, res.Error.Err)
}

// finishAsking is finishRound for a request that failed with err (nil
// when the error has no cause), its state bound to subject.
func (s *server) finishAsking(ctx context.Context, st *callState, m *message, subject string, err error) ([]byte, *rpcError, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	rd := st.round
	if rd == nil {
		return nil, nil, false
	}
	if iae, ok := errors.AsType[*otc.InvalidAnswerError](err); ok && err != nil {
		return nil, newError(codeInvalidParams, "Invalid params: inputResponses: %s", iae.Error()), true
	}
	if len(rd.pending) == 0 {
		return nil, nil, false
	}
	who, err := callerOf(ctx, st.request)
	if err != nil { // Ask refused to ask it
		return nil, nil, false
	}
	state := &roundState{
		Tool:    subject,
		Args:    argsDigest(m.arguments),
		Caller:  who,
		Expires: time.Now().Add(s.sealer.ttl).Unix(),
		Answers: rd.used,
		Asked:   make(map[string]string, len(rd.pending)),
	}
	for k, r := range rd.pending {
		state.Asked[k] = questionDigest(r)
	}
	var id [16]byte
	_, _ = rand.Read(id[:]) // never fails (crypto/rand documents it)
	state.ID = base64.RawURLEncoding.EncodeToString(id[:])
	sealed, err := s.sealer.seal(state)
	if err != nil {
		return nil, &rpcError{Code: codeInternalError, Message: "The call cannot go on: " + err.Error()}, true
	}
	b := make([]byte, 0, 256+len(sealed))
	b = append(b, `{"resultType":"input_required","inputRequests":{`...)
	for i, k := range slices.Sorted(maps.Keys(rd.pending)) {
		r := rd.pending[k]
		if i > 0 {
			b = append(b, ',')
		}
		b = wire.AppendString(b, k)
		b = append(b, `:{"method":`...)
		b = wire.AppendString(b, r.Method)
		b = append(b, `,"params":`...)
		params := r.Params
		if len(params) == 0 {
			params = json.RawMessage(`{}`)
		}
		b = append(b, params...)
		b = append(b, '}')
	}
	b = append(b, `},"requestState":`...)
	b = wire.AppendString(b, sealed)
	b = append(b, `,"_meta":{`...)
	b = append(b, s.infoMeta...)
	b = append(b, "}}"...)
	return b, nil, true
}
