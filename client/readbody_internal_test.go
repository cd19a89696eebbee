package client

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadBody reads bodies whose length the server gave, right or wrong,
// or did not, within a limit of 8 bytes: what it reads is the body, or its
// first 9 bytes when it is longer than the limit; a failing read fails.
func TestReadBody(t *testing.T) {
	for _, c := range []struct {
		body   string
		length int64
		want   string
	}{
		{"", 0, ""},
		{"12345", 5, "12345"},
		{"12345678", 8, "12345678"},
		{"12345", -1, "12345"},
		{"123456789abc", -1, "123456789"},
		{"123456789abc", 12, "123456789"}, // over the limit: read to one past it
		{"1234567", 3, "1234567"},         // longer than it said (another transport's)
		{"1234567890", 3, "123456789"},    // and over the limit
		{"12", 5, "12"},                   // shorter than it said
	} {
		for _, r := range []io.Reader{strings.NewReader(c.body), iotest.OneByteReader(strings.NewReader(c.body))} {
			got, err := readBody(&http.Response{Body: io.NopCloser(r), ContentLength: c.length}, 8)
			require.NoError(t, err)
			assert.Equal(t, c.want, string(got), "%q, Content-Length %d", c.body, c.length)
		}
	}
	boom := errors.New("boom")
	_, err := readBody(&http.Response{Body: io.NopCloser(iotest.ErrReader(boom)), ContentLength: 4}, 8)
	assert.ErrorIs(t, err, boom)
	_, err = readBody(&http.Response{Body: io.NopCloser(io.MultiReader(strings.NewReader("ab"), iotest.ErrReader(boom))), ContentLength: 4}, 8)
	assert.ErrorIs(t, err, boom)
}
