package wire

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/otcgo/otc/internal/jsonparse"
)

// ErrTooLarge is returned by ReadBody for a body over its limit.
var ErrTooLarge = errors.New("request body too large")

// ErrTimeout is returned by ReadBody for a body that did not arrive in
// time. The connection is then marked to close.
var ErrTimeout = errors.New("request body read timed out")

// initialBodyBuffer is how much of a body's announced Content-Length is
// allocated up front. A client may announce any length and send less, so
// memory follows the bytes that arrive, not the header.
const initialBodyBuffer = 16 << 10

// ReadBody reads the request body within maxBody bytes and, when timeout
// is not zero, within that time. The buffer comes from the pool; the
// caller releases it with ReleaseBuffer, even on error. Errors other than
// ErrTooLarge and ErrTimeout are the connection's.
func ReadBody(w http.ResponseWriter, r *http.Request, maxBody int64, timeout time.Duration) (*bytes.Buffer, error) {
	if r.ContentLength > maxBody {
		return nil, ErrTooLarge
	}
	// net/http lifts the read deadline once the body has been read to
	// its end (it then reads on, to notice the client leaving), so the
	// limit covers the body only, never the tool's run.
	if srv, _ := r.Context().Value(http.ServerContextKey).(*http.Server); timeout > 0 && (srv == nil || srv.ReadTimeout <= 0 || srv.ReadTimeout > timeout) {
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(timeout))
	}
	buf := GetBuffer()
	if r.ContentLength > 0 {
		buf.Grow(int(min(r.ContentLength, initialBodyBuffer)))
	}
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return buf, ErrTooLarge
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			w.Header().Set("Connection", "close")
			return buf, ErrTimeout
		}
		return buf, err
	}
	return buf, nil
}

// ReadAnswer reads the body of an answer to a request of ours (a metadata
// document, a key set, an introspection answer): at most limit bytes,
// since the server at the other end may send any length. what names the
// body in errors: "the key set" gives "reading the key set: …" and "the
// key set is over N bytes".
func ReadAnswer(r io.Reader, limit int, what string) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("reading %s: %w", what, err)
	case len(body) > limit:
		return nil, fmt.Errorf("%s is over %d bytes", what, limit)
	}
	return body, nil
}

// JWTParts decodes the header and the claims of a compact JWT without
// verifying anything, for telling which authenticator a refused token was
// meant for: each is nil when its part is not base64url holding a JSON
// object, and both are nil when token is not three parts.
func JWTParts(token string) (header, claims map[string]any) {
	if strings.Count(token, ".") != 2 {
		return nil, nil
	}
	head, rest, _ := strings.Cut(token, ".")
	payload, _, _ := strings.Cut(rest, ".")
	return jwtObject(head), jwtObject(payload)
}

// jwtObject decodes one base64url part of a JWT holding a JSON object, or
// returns nil.
func jwtObject(part string) map[string]any {
	raw, err := base64.RawURLEncoding.DecodeString(part)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// ArmWriteDeadline restarts the server's WriteTimeout, if it has one, as
// the answer to a call is about to be written. net/http starts that clock
// when the request's headers are read, so a tool that ran longer than the
// timeout could not answer at all; restarted here, the timeout bounds the
// writing of the answer, which is what it is for.
func ArmWriteDeadline(w http.ResponseWriter, r *http.Request) {
	if srv, _ := r.Context().Value(http.ServerContextKey).(*http.Server); srv != nil && srv.WriteTimeout > 0 {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(srv.WriteTimeout))
	}
}

// SetJSONHeaders sets the headers of a JSON body of n bytes, with
// X-Content-Type-Options: nosniff when nosniff is true. The keys are in
// canonical form, so Header.Set's work is not needed; the values share one
// allocation, each slice capped at its own element so that an append to
// one cannot reach the next.
func SetJSONHeaders(h http.Header, n int, nosniff bool) {
	vals := [...]string{"application/json", strconv.Itoa(n), "nosniff"}
	all := vals[:]
	h["Content-Type"] = all[0:1:1]
	h["Content-Length"] = all[1:2:2]
	if nosniff {
		h["X-Content-Type-Options"] = all[2:3:3]
	}
}

// bufferPool recycles request and response buffers. Buffers that grew past
// maxPooledBuffer are dropped, so one large request does not pin memory.
var bufferPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledBuffer = 64 << 10

// GetBuffer returns an empty buffer from the pool.
func GetBuffer() *bytes.Buffer {
	b := bufferPool.Get().(*bytes.Buffer)
	b.Reset()
	return b
}

// ReleaseBuffer returns b to the pool; b may be nil.
func ReleaseBuffer(b *bytes.Buffer) {
	if b != nil && b.Cap() <= maxPooledBuffer {
		bufferPool.Put(b)
	}
}

// AppendString appends s as a JSON string. Control characters, quotes,
// backslashes and the line separators U+2028 and U+2029 are escaped, and
// invalid UTF-8 becomes U+FFFD, as encoding/json does.
func AppendString(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Most bytes of most strings are written as they are: skip their
		// run eight at a time.
		if i = jsonparse.PlainRun(s, i); i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// MaxRetryAfter bounds the wait a Retry-After header may ask for, so that
// a hostile value cannot overflow.
const MaxRetryAfter = 24 * time.Hour

// RetryAfter reads a Retry-After header (RFC 9110 §10.2.3): a number of
// seconds, or an HTTP date, which now turns into a wait, within [0,
// MaxRetryAfter]. Anything else, or nothing, is no wait.
func RetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(min(secs, int64(MaxRetryAfter/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(t.Sub(now), 0), MaxRetryAfter)
	}
	return 0
}

// Truncate shortens s to at most n bytes, on a rune boundary, marking the
// cut with an ellipsis: for client strings echoed in messages and logs.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// WriteBody sends a JSON body, given in one or more parts. A failed write
// means the client has gone; there is no one left to tell.
func WriteBody(w http.ResponseWriter, status int, parts ...[]byte) {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	SetJSONHeaders(w.Header(), n, true)
	w.WriteHeader(status)
	for _, p := range parts {
		if _, err := w.Write(p); err != nil {
			return
		}
	}
}

// Recover, deferred by a handler's ServeHTTP, answers a panic of the
// handler itself (an author's hook, say; a tool's panics never get here,
// the registry turns them into tool errors) with a 500 of the handler's
// own JSON body, after logging it with its stack (LogFault), so that no
// fault reaches the client as an HTML page or a dropped connection.
func Recover(logger *slog.Logger, w http.ResponseWriter, r *http.Request, body []byte) {
	v := recover()
	if v == nil {
		return
	}
	LogFault(logger, r, v)
	WriteBody(w, http.StatusInternalServerError, body)
}

// LogFault logs a panic recovered in a handler, with its stack. It
// re-panics http.ErrAbortHandler, which a handler panics with on purpose
// to abort a response, so that net/http does what that asks.
func LogFault(logger *slog.Logger, r *http.Request, v any) {
	if v == http.ErrAbortHandler {
		panic(v)
	}
	logger.ErrorContext(r.Context(), "otc: handler panicked",
		slog.String("path", r.URL.Path),
		slog.String("panic", DescribePanic(v)),
		slog.String("stack", string(debug.Stack())))
}

// DescribePanic formats a panic value, surviving a value whose own String
// or Error method panics.
func DescribePanic(v any) (s string) {
	defer func() {
		if recover() != nil {
			s = fmt.Sprintf("panic value of type %T", v)
		}
	}()
	return fmt.Sprint(v)
}

// AuthorizationRepeated reports whether lines, the Authorization header
// lines of a request, hold more than one credential. Authorization is not
// a list, so two lines always do. One line is read as a comma-separated
// list, which is how a proxy may join two lines (RFC 9110 §5.3), only when
// an element is a Bearer credential: a bearer token never holds a comma
// (RFC 6750 §2.1), whereas the auth-params of other schemes (Digest) do.
func AuthorizationRepeated(lines []string) bool {
	switch len(lines) {
	case 0:
		return false
	case 1:
	default:
		return true
	}
	if !strings.Contains(lines[0], ",") {
		return false
	}
	for elem := range strings.SplitSeq(lines[0], ",") {
		scheme, _, _ := strings.Cut(strings.TrimSpace(elem), " ")
		if strings.EqualFold(scheme, "Bearer") {
			return true
		}
	}
	return false
}

// SetRetryAfter sets a Retry-After header of d, in whole seconds rounded
// up; it sets none for d <= 0.
func SetRetryAfter(h http.Header, d time.Duration) {
	if d <= 0 {
		return
	}
	h.Set("Retry-After", strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10))
}

// The defaults of a handler's body options, the same for every wire
// format (the root package exports them as DefaultMaxBodyBytes and
// DefaultBodyReadTimeout).
const (
	DefaultMaxBodyBytes    = 4 << 20
	DefaultBodyReadTimeout = 30 * time.Second
)

// BodyLimits applies the defaults to a handler's body options: a size of
// zero or less is DefaultMaxBodyBytes; a timeout of zero is
// DefaultBodyReadTimeout, and a negative one no limit (0).
func BodyLimits(maxBytes int64, timeout time.Duration) (int64, time.Duration) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBodyBytes
	}
	switch {
	case timeout == 0:
		timeout = DefaultBodyReadTimeout
	case timeout < 0:
		timeout = 0
	}
	return maxBytes, timeout
}

// BodyProblem says why ReadBody failed, as every wire format answers it:
// the HTTP status (413 for a body over maxBytes, 408 for one that did not
// arrive within timeout, 400 for one that could not be read) and the
// message.
func BodyProblem(err error, maxBytes int64, timeout time.Duration) (status int, message string) {
	switch {
	case errors.Is(err, ErrTooLarge):
		return http.StatusRequestEntityTooLarge, fmt.Sprintf("The request body is larger than the limit of %d bytes", maxBytes)
	case errors.Is(err, ErrTimeout):
		return http.StatusRequestTimeout, fmt.Sprintf("The request body did not arrive within %v", timeout)
	}
	return http.StatusBadRequest, "The request body could not be read"
}

// Loopback reports whether host (a URL's host name, without port) names
// this machine: "localhost" or a loopback address. A key set or metadata
// document fetched over plain http is trusted only from such a host.
func Loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// UUID writes 16 random bytes as a version 4 UUID, setting its version
// and variant bits.
func UUID(b [16]byte) string {
	var s [36]byte
	return string(AppendUUID(s[:0], b))
}

// AppendUUID appends the version 4 UUID that UUID returns for b.
func AppendUUID(dst []byte, b [16]byte) []byte {
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	n := len(dst)
	dst = append(dst, "00000000-0000-0000-0000-000000000000"...)
	s := dst[n:]
	hex.Encode(s[0:8], b[0:4])
	hex.Encode(s[9:13], b[4:6])
	hex.Encode(s[14:18], b[6:8])
	hex.Encode(s[19:23], b[8:10])
	hex.Encode(s[24:], b[10:])
	return dst
}
