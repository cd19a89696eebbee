package modeltext

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestValue(t *testing.T) {
	for in, want := range map[string]string{
		`"done: x"`:       "done: x",
		`"say \"hi\"\n"`:  "say \"hi\"\n",
		`"\u003cb\u003e"`: "<b>",
		`15`:              "15",
		`{"a":1}`:         `{"a":1}`,
		`["x"]`:           `["x"]`,
		`"broken`:         `"broken`,
		`true`:            "true",
	} {
		assert.Equal(t, want, Value([]byte(in)), in)
	}
}

func TestToolError(t *testing.T) {
	assert.Equal(t, "Busy", ToolError("Busy", "", false, time.Second), "no retry: no delay said")
	assert.Equal(t, "Busy\n\nThis may succeed if tried again.", ToolError("Busy", "", true, 0))
	assert.Equal(t, "Busy\n\nask later\n\nThis may succeed if tried again after 1.5s.", ToolError("Busy", "ask later", true, 1500*time.Millisecond))
}

func TestInvalidArguments(t *testing.T) {
	assert.Equal(t, "The arguments are invalid:\n- a: Must be a number\n- b.c: Required\nCorrect these arguments and call the tool again.",
		InvalidArguments(map[string]string{"b.c": "Required", "a": "Must be a number"}))
}
