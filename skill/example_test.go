package skill_test

import (
	"fmt"
	"net/http"
	"testing/fstest"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/skill"
)

// A server ships the instructions for using its tools as a skill: a
// folder with its SKILL.md (an embed.FS in a real program), served over
// MCP beside the tools.
func ExampleRegister() {
	skills := fstest.MapFS{
		"using-refunds/SKILL.md":            {Data: []byte("---\nname: using-refunds\ndescription: How to refund an order with this server's tools\n---\n\nLook the order up, then call Payments_Refund once.\n")},
		"using-refunds/examples/partial.md": {Data: []byte("Refund 5.00 of order A-1: amount_cents 500.\n")},
	}
	// docs:start register
	reg := otc.NewRegistry(nil)
	handles, err := skill.Register(reg, skills, nil) // skills: an fs.FS of folders, each with its SKILL.md
	if err != nil {
		panic(err)
	}
	for _, h := range handles {
		fmt.Println(h.Name(), h.URI())
	}
	http.Handle("/mcp", mcp.NewHandler(reg, nil))
	// docs:end register

	// Output:
	// using-refunds skill://using-refunds/SKILL.md
}
