package otc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
)

// registerInput registers a tool whose input type is In.
func registerInput[In any](t *testing.T) error {
	t.Helper()
	reg := otc.NewRegistry(nil)
	return otc.Register(reg, otc.Tool{ID: "Tags.Check", Version: "1.0.0", Description: "Checks tags."},
		func(context.Context, In) (string, error) { return "", nil })
}

func TestTagMistakesFailRegistration(t *testing.T) {
	type typo struct {
		N int `json:"n" jsonschema:"description=A number.,minimun=3"`
	}
	type badBound struct {
		N int `json:"n" jsonschema:"description=A number.,minimum=abc"`
	}
	type enumOnInt struct {
		N int `json:"n" jsonschema:"description=A number.,enum=one"`
	}
	type defaultOnInt struct {
		N int `json:"n,omitempty" jsonschema:"description=A number.,default=abc"`
	}
	type commaInDescription struct {
		City string `json:"city" jsonschema:"description=City, e.g. Paris"`
	}
	type stringBound struct {
		S string `json:"s" jsonschema:"description=Text.,maximum=3"`
	}
	type badLength struct {
		S string `json:"s" jsonschema:"description=Text.,maxLength=-1"`
	}
	type badPattern struct {
		S string `json:"s" jsonschema:"description=Text.,pattern=[a-"`
	}
	type enumOnBool struct {
		B bool `json:"b" jsonschema:"description=A flag.,enum=true"`
	}
	type boolDefault struct {
		B bool `json:"b,omitempty" jsonschema:"description=A flag.,default=yes"`
	}
	type itemEnum struct {
		L []int `json:"l" jsonschema:"description=Numbers.,enum=x"`
	}
	type nested struct {
		Inner struct {
			N float64 `json:"n" jsonschema:"description=A number.,maximum=ten"`
		} `json:"inner" jsonschema:"description=Inside."`
	}
	type unknownFlag struct {
		S string `json:"s" jsonschema:"description=Text.,requird"`
	}
	type keywordOnAny struct {
		V any `json:"v" jsonschema:"description=Anything.,enum=x"`
	}
	type int8Bound struct {
		N int8 `json:"n" jsonschema:"description=A small number.,minimum=-500"`
	}
	type uintBound struct {
		N uint `json:"n" jsonschema:"description=A count.,minimum=-1"`
	}
	type itemBound struct {
		L []uint8 `json:"l,omitempty" jsonschema:"description=Not bytes: a []uint8 is base64 text.,maximum=300"`
	}
	type equalsInValue struct {
		N int `json:"n" jsonschema:"description=A number.,enum=1=2"`
	}
	type durationAsInteger struct {
		D time.Duration `json:"d" jsonschema:"description=A wait.,minimum=5"`
	}
	type bareUniqueItems struct {
		L []string `json:"l" jsonschema:"description=Labels.,uniqueItems"`
	}
	type uniqueItemsFalse struct {
		L []string `json:"l" jsonschema:"description=Labels.,uniqueItems=false"`
	}
	type bareKeyword struct {
		S string `json:"s" jsonschema:"description=Text.,minLength"`
	}
	type dateOnTime struct {
		T time.Time `json:"t" jsonschema:"description=A day.,format=date"`
	}
	type formatOnDuration struct {
		D time.Duration `json:"d" jsonschema:"description=A wait.,format=duration"`
	}
	type numberArrayDefault struct {
		L []int `json:"l,omitempty" jsonschema:"description=Numbers.,default=1"`
	}
	type textAsInteger struct {
		P priority `json:"p" jsonschema:"description=A priority.,minimum=1"`
	}
	for _, tc := range []struct {
		name    string
		err     error
		message string
	}{
		{"typo", registerInput[typo](t), `field otc_test.typo.N: jsonschema tag "minimun=3": "minimun" is not a keyword of an integer field (did you mean "minimum"?)`},
		{"unparsable bound", registerInput[badBound](t), `field otc_test.badBound.N: jsonschema tag "minimum=abc": minimum must be a number, not "abc"`},
		{"enum on an int", registerInput[enumOnInt](t), `field otc_test.enumOnInt.N: jsonschema tag "enum=one": the field is an integer, and "one" is not one`},
		{"default on an int", registerInput[defaultOnInt](t), `field otc_test.defaultOnInt.N: jsonschema tag "default=abc": the field is an integer, and "abc" is not one`},
		{"comma in a description", registerInput[commaInDescription](t), `field otc_test.commaInDescription.City: jsonschema tag " e.g. Paris": a comma ends the description, and "e.g. Paris" is not a keyword; write the comma as \\, in the struct tag, or put the text in a jsonschema_description tag`},
		{"number keyword on a string", registerInput[stringBound](t), `"maximum" is not a keyword of a string field (this field takes anchor, default, description, enum, example, format, maxLength, minLength, nullable, pattern, readOnly, required, title, type, writeOnly)`},
		{"negative length", registerInput[badLength](t), `maxLength must be a whole number, not "-1"`},
		{"bad pattern", registerInput[badPattern](t), `jsonschema tag "pattern=[a-": the pattern does not compile`},
		{"enum on a bool", registerInput[enumOnBool](t), `"enum" is not a keyword of a boolean field`},
		{"bool default", registerInput[boolDefault](t), `the field is a boolean: write default=true or default=false`},
		{"item enum", registerInput[itemEnum](t), `jsonschema tag "enum=x": the field is an integer, and "x" is not one`},
		{"nested field", registerInput[nested](t), `field otc_test.nested.Inner.N: jsonschema tag "maximum=ten": maximum must be a number`},
		{"unknown flag", registerInput[unknownFlag](t), `"requird" is not a keyword the schema reflector knows (did you mean "required"?)`},
		{"keyword on a field of any type", registerInput[keywordOnAny](t), `jsonschema tag "enum=x": "enum" has no effect: the schema of a field of type interface {} has no JSON type (it accepts any value)`},
		{"bound beyond int8", registerInput[int8Bound](t), `jsonschema tag "minimum=-500": the field's type int8 holds -128 to 127, so minimum=-500 promises values the function cannot receive`},
		{"negative bound on uint", registerInput[uintBound](t), `the field's type uint holds no negative number`},
		{"number keyword on bytes", registerInput[itemBound](t), `"maximum" is not a keyword of a string field`},
		{"equals sign in a number", registerInput[equalsInValue](t), `jsonschema tag "enum=1=2": the reflector drops the keyword of an integer field when its value contains "="`},
		{"duration is a string in input", registerInput[durationAsInteger](t), `jsonschema tag "minimum=5": "minimum" is not a keyword of a string field`},
		{"bare uniqueItems", registerInput[bareUniqueItems](t), `jsonschema tag "uniqueItems": the reflector reads uniqueItems only with a value: write uniqueItems=true`},
		{"uniqueItems=false", registerInput[uniqueItemsFalse](t), `jsonschema tag "uniqueItems=false": the reflector sets uniqueItems whatever its value: write uniqueItems=true, or leave it out`},
		{"a keyword without its value", registerInput[bareKeyword](t), `jsonschema tag "minLength": "minLength" needs a value: write minLength=…`},
		{"a date on a time.Time", registerInput[dateOnTime](t), `jsonschema tag "format=date": a time.Time reads only RFC 3339 date-times, so format=date would promise values it refuses: for a date, use a string with format=date and time.Parse it in the function`},
		{"a format on a time.Duration", registerInput[formatOnDuration](t), `jsonschema tag "format=duration": a time.Duration reads Go duration strings ("90s")`},
		{"default of an array of numbers", registerInput[numberArrayDefault](t), `jsonschema tag "default=1": the reflector writes an array's default as a list of strings, which an array of integers refuses: apply this default in the function`},
		{"TextUnmarshaler is a string", registerInput[textAsInteger](t), `"minimum" is not a keyword of a string field`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Error(t, tc.err)
			assert.Contains(t, tc.err.Error(), tc.message)
		})
	}
}

func TestValidTagsStillRegister(t *testing.T) {
	type item struct {
		Name string `json:"name" jsonschema:"description=The item's name.,minLength=1,maxLength=40,pattern=^[a-z]+$"`
	}
	type valid struct {
		City     string          `json:"city" jsonschema:"description=City\\, e.g. Paris,example=Paris"`
		Country  string          `json:"country,omitempty" jsonschema_description:"Country, as ISO 3166 alpha-2." jsonschema:"enum=FR,enum=DE,default=FR"`
		Count    int             `json:"count" jsonschema:"description=How many.,minimum=1,maximum=10,multipleOf=1,enum=1,enum=5,default=1"`
		Ratio    float64         `json:"ratio,omitempty" jsonschema:"description=A ratio.,exclusiveMinimum=0,exclusiveMaximum=1.5,default=0.5"`
		Flag     bool            `json:"flag,omitempty" jsonschema:"description=A flag.,default=true"`
		Tags     []string        `json:"tags,omitempty" jsonschema:"description=Tags.,minItems=1,maxItems=3,uniqueItems=true,enum=a,enum=b"`
		Sizes    []int           `json:"sizes,omitempty" jsonschema:"description=Sizes.,minimum=0,maximum=9"`
		Items    []item          `json:"items,omitempty" jsonschema:"description=Items.,maxItems=5"`
		Quoted   int             `json:"quoted,string,omitempty" jsonschema:"description=A number sent as a string.,pattern=^[0-9]+$"`
		Note     *string         `json:"note,omitempty" jsonschema:"description=A note.,nullable,maxLength=100"`
		Title    string          `json:"title" jsonschema:"title=Title,description=A title.,required,readOnly=false"`
		Hidden   string          `json:"-" jsonschema:"whatever=1"`
		Ignored  string          `json:"ignored,omitempty" jsonschema:"-"`
		Trailing string          `json:"trailing,omitempty" jsonschema:"description=Ends in a comma.,"`
		Wait     time.Duration   `json:"wait,omitempty" jsonschema:"description=A wait.,default=90s,enum=90s,enum=5m"`
		Priority priority        `json:"priority,omitempty" jsonschema:"description=A priority.,enum=low,enum=high,default=low"`
		Raw      json.RawMessage `json:"raw,omitempty" jsonschema:"description=Text as raw JSON.,minLength=1,type=string"`
		Small    int8            `json:"small,omitempty" jsonschema:"description=A small number.,minimum=-128,maximum=100,default=-5"`
	}
	require.NoError(t, registerInput[valid](t))
}

// priority is read from a JSON string by UnmarshalText and written as
// one by MarshalText, so its schema, and the keywords its tags may use,
// are a string's.
type priority int

func (p priority) MarshalText() ([]byte, error) {
	switch p {
	case 1:
		return []byte("low"), nil
	case 2:
		return []byte("high"), nil
	}
	return nil, fmt.Errorf("priority %d has no name", int(p))
}

func (p *priority) UnmarshalText(b []byte) error {
	switch string(b) {
	case "low":
		*p = 1
	case "high":
		*p = 2
	default:
		return fmt.Errorf("unknown priority %q: use low or high", b)
	}
	return nil
}
