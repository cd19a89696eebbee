package skillmd_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/internal/skillmd"
)

// TestFrontMatter: the front matter is the YAML between the two ---
// lines, a byte-order mark and carriage returns allowed; what is not is
// said.
func TestFrontMatter(t *testing.T) {
	raw, fm, err := skillmd.FrontMatter([]byte("\ufeff---\r\nname: a\r\ndescription: \"d: e\"\r\ntags: [x, y]\r\n---\r\nbody\n"))
	require.NoError(t, err)
	assert.Equal(t, "a", fm["name"])
	assert.JSONEq(t, `{"name":"a","description":"d: e","tags":["x","y"]}`, string(raw))
	for in, want := range map[string]string{
		"# no front matter\n":          "does not begin with YAML front matter",
		"---\nname: a\n":               "no closing --- line",
		"---\n---\n":                   "is empty",
		"---\nname: a\nx: y: z\n---\n": "yaml: line 3",
	} {
		_, _, err := skillmd.FrontMatter([]byte(in))
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
	}
}
