package docs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/otcgo/otc"
)

// docs:start tags

// Room is one room of a booking; a nested struct is an object with its
// own required list.
type Room struct {
	Name     string `json:"name" jsonschema:"description=What to call the room."`
	Capacity int    `json:"capacity,omitempty" jsonschema:"description=How many people it seats.,minimum=1,maximum=500"`
}

// BookInput is the input of Rooms.Book.
type BookInput struct {
	City  string    `json:"city" jsonschema:"description=The city to book in."`
	Start time.Time `json:"start" jsonschema:"description=When the meeting starts."`
	Size  string    `json:"size,omitempty" jsonschema:"description=The size of room.,enum=small,enum=large,default=small"`
	Limit int       `json:"limit,omitempty" jsonschema:"description=How many offers to return.,minimum=1,maximum=10,default=3"`
	Zip   string    `json:"zip,omitempty" jsonschema_description:"The postcode, if known, e.g. 75001." jsonschema:"pattern=^[0-9]{5}$"`
	Rooms []Room    `json:"rooms" jsonschema:"description=The rooms wanted.,minItems=1,maxItems=3"`
}

// docs:end tags

// The schema a struct's tags give, and what the function receives for
// parameters left out or sent as null.
func Example_tags() {
	reg := otc.NewRegistry(nil)
	// docs:start book
	err := otc.Register(reg, otc.Tool{ID: "Rooms.Book", Version: "1.0.0", Description: "Books meeting rooms."},
		func(ctx context.Context, in BookInput) (string, error) {
			return fmt.Sprintf("%d %s rooms in %s", in.Limit, in.Size, in.City), nil
		})
	// docs:end book
	if err != nil {
		panic(err)
	}
	// One line per property, in the order of the fields.
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	_ = json.Unmarshal(reg.Tools()[0].InputSchema.Parameters, &schema)
	for _, name := range []string{"city", "start", "size", "limit", "zip", "rooms"} {
		fmt.Printf("%s: %s\n", name, schema.Properties[name])
	}
	fmt.Println("required:", schema.Required)

	res, err := reg.Call(context.Background(), &otc.CallRequest{
		ToolID: "Rooms.Book",
		Input:  json.RawMessage(`{"city":"Paris","start":"2026-11-23T10:00:00Z","size":null,"rooms":[{"name":"A"}]}`),
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(res.Value))
	// Output:
	// city: {"type":"string","description":"The city to book in."}
	// start: {"type":"string","format":"date-time","description":"When the meeting starts."}
	// size: {"type":"string","enum":["small","large"],"description":"The size of room.","default":"small"}
	// limit: {"type":"integer","maximum":10,"minimum":1,"description":"How many offers to return.","default":3}
	// zip: {"type":"string","pattern":"^[0-9]{5}$","description":"The postcode, if known, e.g. 75001."}
	// rooms: {"items":{"properties":{"name":{"type":"string","description":"What to call the room."},"capacity":{"type":"integer","maximum":500,"minimum":1,"description":"How many people it seats."}},"additionalProperties":false,"type":"object","required":["name"]},"type":"array","maxItems":3,"minItems":1,"description":"The rooms wanted."}
	// required: [city start rooms]
	// "3 small rooms in Paris"
}

// Registration refuses a tag the reflector would drop or misread.
func Example_tagErrors() {
	reg := otc.NewRegistry(nil)
	type typo struct {
		Count int `json:"count" jsonschema:"description=How many.,minimun=3"`
	}
	err := otc.Register(reg, otc.Tool{ID: "Tags.Typo", Version: "1.0.0", Description: "Shows a typo."},
		func(ctx context.Context, in typo) (int, error) { return in.Count, nil })
	fmt.Println(err)

	type comma struct {
		City string `json:"city" jsonschema:"description=City, e.g. Paris"`
	}
	err = otc.Register(reg, otc.Tool{ID: "Tags.Comma", Version: "1.0.0", Description: "Shows a comma."},
		func(ctx context.Context, in comma) (string, error) { return in.City, nil })
	fmt.Println(err)
	// Output:
	// otc: tool "Tags.Typo@1.0.0": input type: field docs_test.typo.Count: jsonschema tag "minimun=3": "minimun" is not a keyword of an integer field (did you mean "minimum"?)
	// otc: tool "Tags.Comma@1.0.0": input type: field docs_test.comma.City: jsonschema tag " e.g. Paris": a comma ends the description, and "e.g. Paris" is not a keyword; write the comma as \\, in the struct tag, or put the text in a jsonschema_description tag
}

// A time.Duration parameter reads Go duration strings, and a number is
// refused under its name.
func Example_duration() {
	reg := otc.NewRegistry(nil)
	type waitInput struct {
		For time.Duration `json:"for" jsonschema:"description=How long to wait."`
	}
	err := otc.Register(reg, otc.Tool{ID: "Timer.Wait", Version: "1.0.0", Description: "Waits."},
		func(ctx context.Context, in waitInput) (string, error) { return in.For.String(), nil })
	if err != nil {
		panic(err)
	}
	for _, input := range []string{`{"for":"1h30m"}`, `{"for":90}`} {
		res, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Timer.Wait", Input: json.RawMessage(input)})
		var e *otc.Error
		if errors.As(err, &e) {
			fmt.Println(e.Code.HTTPStatus(), e.ParameterErrors["for"])
			continue
		}
		fmt.Println(string(res.Value))
	}
	// Output:
	// "1h30m0s"
	// 422 Must be a duration string such as "90s", "5m" or "1h30m" (not a number of seconds)
}

// A hand-written schema may share definitions; the catalog carries the
// inlined copy.
func Example_handWritten() {
	reg := otc.NewRegistry(nil)
	schema := json.RawMessage(`{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"type": "object",
		"properties": {
			"from": {"$ref": "#/$defs/address", "description": "Where the parcel leaves from."},
			"to":   {"$ref": "#/$defs/address", "description": "Where it goes."}
		},
		"required": ["from", "to"],
		"$defs": {
			"address": {
				"type": "object",
				"properties": {"zip": {"type": "string", "pattern": "^[0-9]{5}$"}},
				"required": ["zip"]
			}
		}
	}`)
	err := otc.Register(reg, otc.Tool{
		ID: "Parcel.Quote", Version: "1.0.0", Description: "Quotes a delivery.",
		InputSchema: schema,
	}, func(ctx context.Context, in map[string]any) (float64, error) {
		return 4.5, nil
	})
	if err != nil {
		panic(err)
	}
	def := reg.Tools()[0]
	fmt.Println(string(def.InputSchema.Parameters))
	fmt.Println(len(def.FullInputSchema) > 0)
	// Output:
	// {"type":"object","properties":{"from":{"description":"Where the parcel leaves from.","allOf":[{"type":"object","properties":{"zip":{"type":"string","pattern":"^[0-9]{5}$"}},"required":["zip"]}]},"to":{"description":"Where it goes.","allOf":[{"type":"object","properties":{"zip":{"type":"string","pattern":"^[0-9]{5}$"}},"required":["zip"]}]}},"required":["from","to"]}
	// true
}
