package search

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
)

// TestIndexKeepsWhatDidNotChange: a change of the catalog indexes the
// tools that changed, keeps the others as they were, and hands a removed
// tool's place to the next one.
func TestIndexKeepsWhatDidNotChange(t *testing.T) {
	reg := otc.NewRegistry(nil)
	reg1 := func(id, version, desc string) {
		require.NoError(t, otc.Register(reg, otc.Tool{ID: id, Version: version, Description: desc},
			func(context.Context, struct{}) (string, error) { return "", nil }))
	}
	reg1("A.read_file", "1.0.0", "Read a file.")
	reg1("B.write_file", "1.0.0", "Write a file.")
	reg1("B.write_file", "2.0.0", "Write a file, faster.")
	_, err := Tools(context.Background(), reg, "file", nil)
	require.NoError(t, err)
	x := indexOf(reg)
	require.Len(t, x.docs, 3)
	require.Len(t, x.families, 2)
	var kept *doc
	for _, d := range x.docs {
		if d.fam.key == "A.read_file" {
			kept = d
		}
	}
	require.NotNil(t, kept)
	assert.Equal(t, 2, x.families["B.write_file"].versions)

	assert.Equal(t, 2, reg.Remove("B.write_file"))
	reg1("C.list_files", "1.0.0", "List files.")
	found, err := Tools(context.Background(), reg, "file", nil)
	require.NoError(t, err)
	assert.Len(t, found, 2)
	assert.Len(t, x.docs, 2)
	assert.Len(t, x.families, 2, "the removed tool's family is gone")
	assert.NotContains(t, x.families, "B.write_file")
	assert.Same(t, kept, x.docs[kept.def], "the tool that did not change was not indexed again")
	assert.Len(t, x.slots, 3, "the new tool took a removed one's place")
	assert.Len(t, x.free, 1)
}
