// Command conformance serves, over MCP, the tools the official MCP
// conformance suite (@modelcontextprotocol/conformance) calls by name, so
// that the suite can check this library's MCP server. It is a test
// fixture more than an example: each tool does what the suite's scenario
// for it expects.
//
//	go run ./examples/conformance -addr 127.0.0.1:3000   # MCP at /mcp
//
// .ci/mcp-conformance.sh builds it, starts it and runs the suite against it.
package main

import (
	"bytes"
	"context"
	"embed"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/mount"
	"github.com/otcgo/otc/skill"
)

// skillsFS holds the skills the server serves.
//
//go:embed skills
var skillsFS embed.FS

func main() {
	addr := flag.String("addr", "127.0.0.1:3000", "`host:port` to listen on; MCP is served at /mcp")
	flag.Parse()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr, logger); err != nil {
		logger.Error("conformance: " + err.Error())
		os.Exit(1)
	}
}

func run(ctx context.Context, addr string, logger *slog.Logger) error {
	reg, err := newRegistry()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	logger.Info("conformance: serving MCP", "url", "http://"+ln.Addr().String()+"/mcp")
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewHandler(reg, &mcp.Options{Name: "otc-conformance", Version: "1.0.0", Logger: logger}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return mount.Serve(ctx, srv, ln, &mount.ServeOptions{GracePeriod: 5 * time.Second, Logger: logger})
}

// none is the input of a tool without parameters.
type none struct{}

// fixture is one tool of the suite: its name, description and function.
type fixture struct {
	name, description string
	fn                func(context.Context, none) (otc.Content, error)
}

// newRegistry registers the suite's tools.
func newRegistry() (*otc.Registry, error) {
	reg := otc.NewRegistry(nil)
	pngData, err := tinyPNG()
	if err != nil {
		return nil, err
	}
	fixtures := []fixture{
		{"test_simple_text", "Returns a simple text response.", func(context.Context, none) (otc.Content, error) {
			return otc.Content{otc.TextContent("This is a simple text response for testing.")}, nil
		}},
		{"test_image_content", "Returns a small PNG image.", func(context.Context, none) (otc.Content, error) {
			return otc.Content{otc.ImageContent(pngData, "image/png")}, nil
		}},
		{"test_audio_content", "Returns a short WAV sound.", func(context.Context, none) (otc.Content, error) {
			return otc.Content{otc.AudioContent(tinyWAV(), "audio/wav")}, nil
		}},
		{"test_embedded_resource", "Returns an embedded text resource.", func(context.Context, none) (otc.Content, error) {
			return otc.Content{otc.ResourceContent("test://embedded-resource", "text/plain", "This is an embedded resource content.")}, nil
		}},
		{"test_multiple_content_types", "Returns text, an image and an embedded resource.", func(context.Context, none) (otc.Content, error) {
			return otc.Content{
				otc.TextContent("Multiple content types test:"),
				otc.ImageContent(pngData, "image/png"),
				otc.ResourceContent("test://mixed-content-resource", "application/json", `{"test":"data","value":123}`),
			}, nil
		}},
		{"test_tool_with_logging", "Sends three log messages while it runs.", func(ctx context.Context, _ none) (otc.Content, error) {
			otc.LogToClient(ctx, slog.LevelInfo, "Tool execution started")
			if err := sleep(ctx, 50*time.Millisecond); err != nil {
				return nil, err
			}
			otc.LogToClient(ctx, slog.LevelInfo, "Tool processing data")
			if err := sleep(ctx, 50*time.Millisecond); err != nil {
				return nil, err
			}
			otc.LogToClient(ctx, slog.LevelInfo, "Tool execution completed")
			return otc.Content{otc.TextContent("Tool with logging executed successfully")}, nil
		}},
		{"test_logging_tool", "Sends log messages, which reach only a client that asked for them with a log level.", func(ctx context.Context, _ none) (otc.Content, error) {
			otc.LogToClient(ctx, slog.LevelInfo, "Logging tool message")
			otc.LogToClient(ctx, slog.LevelError, "Logging tool error message")
			return otc.Content{otc.TextContent("Logging tool executed")}, nil
		}},
		{"test_error_handling", "Always fails, with a tool error.", func(context.Context, none) (otc.Content, error) {
			return nil, &otc.ToolError{Message: "This tool intentionally returns an error for testing"}
		}},
		{"test_tool_with_progress", "Reports progress 0, 50 and 100 out of 100 while it runs.", func(ctx context.Context, _ none) (otc.Content, error) {
			for i, p := range []float64{0, 50, 100} {
				if i > 0 {
					if err := sleep(ctx, 50*time.Millisecond); err != nil {
						return nil, err
					}
				}
				otc.ReportProgress(ctx, p, 100, "")
			}
			return otc.Content{otc.TextContent("Tool with progress executed successfully")}, nil
		}},
		{"test_missing_capability", "Needs the client's sampling capability, and says so when the client lacks it.", func(ctx context.Context, _ none) (otc.Content, error) {
			if err := mcp.RequireClientCapability(ctx, "sampling"); err != nil {
				return nil, err
			}
			// This server cannot send sampling requests; a client that has
			// the capability gets a plain answer.
			return otc.Content{otc.TextContent("The client declared the sampling capability.")}, nil
		}},
		{"test_streaming_elicitation", "Answers on its own, without asking the client anything.", func(context.Context, none) (otc.Content, error) {
			return otc.Content{otc.TextContent("This server sends no requests to the client; here is the answer.")}, nil
		}},
	}
	err = otc.Register(reg, otc.Tool{
		ID:          "Conformance.json_schema_2020_12_tool",
		Version:     "1.0.0",
		Name:        "json_schema_2020_12_tool",
		Description: "Tool with JSON Schema 2020-12 features",
		InputSchema: json.RawMessage(jsonSchema2020),
	}, func(_ context.Context, in map[string]any) (otc.Content, error) {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		return otc.Content{otc.TextContent("Received: " + string(b))}, nil
	})
	if err != nil {
		return nil, err
	}
	// The http-custom-header-server-validation scenario calls the first tool
	// with an x-mcp-header parameter, and checks that the server compares
	// the Mcp-Param-Region header with the argument.
	err = otc.Register(reg, otc.Tool{
		ID:          "Conformance.test_x_mcp_header",
		Version:     "1.0.0",
		Name:        "test_x_mcp_header",
		Description: "Echoes the region, which a 2026-07-28 client also sends in the Mcp-Param-Region header.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","description":"The region to run in.","x-mcp-header":"Region"}}}`),
	}, func(_ context.Context, in struct {
		Region string `json:"region"`
	}) (otc.Content, error) {
		return otc.Content{otc.TextContent("region=" + in.Region)}, nil
	})
	if err != nil {
		return nil, err
	}
	if err := registerAskTools(reg); err != nil {
		return nil, err
	}
	if err := registerTaskTools(reg); err != nil {
		return nil, err
	}
	for _, f := range fixtures {
		if err := otc.Register(reg, otc.Tool{
			ID:          "Conformance." + f.name,
			Version:     "1.0.0",
			Name:        f.name,
			Description: f.description,
		}, f.fn); err != nil {
			return nil, err
		}
	}
	if err := registerAskingTools(reg); err != nil { // mrtr.go
		return nil, err
	}
	if err := registerAskingPrompt(reg); err != nil { // mrtr.go
		return nil, err
	}
	if err := registerResources(reg, pngData); err != nil { // resources.go
		return nil, err
	}
	// The skills extension's fixtures: a skill with a file and folders,
	// for skills/list, skills/get and resources/directory/read.
	skills, err := fs.Sub(skillsFS, "skills")
	if err != nil {
		return nil, err
	}
	if _, err := skill.Register(reg, skills, nil); err != nil {
		return nil, err
	}
	return reg, nil
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// tinyPNG encodes a 2×2 red image.
func tinyPNG() ([]byte, error) {
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	for x := range 2 {
		for y := range 2 {
			img.Set(x, y, color.RGBA{R: 255, A: 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("encoding the test image: %w", err)
	}
	return buf.Bytes(), nil
}

// tinyWAV returns 10 ms of silence as 8 kHz, 8-bit mono PCM WAV.
func tinyWAV() []byte {
	const rate, samples = 8000, 80
	var b bytes.Buffer
	w := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	w(uint32(36 + samples))
	b.WriteString("WAVEfmt ")
	w(uint32(16))
	w(uint16(1)) // PCM
	w(uint16(1)) // mono
	w(uint32(rate))
	w(uint32(rate)) // bytes per second
	w(uint16(1))    // block align
	w(uint16(8))    // bits per sample
	b.WriteString("data")
	w(uint32(samples))
	b.Write(bytes.Repeat([]byte{128}, samples))
	return b.Bytes()
}

// jsonSchema2020 is the input schema the json-schema-2020-12 scenario
// expects to find intact in tools/list, with a description added to each
// parameter, as the library asks. The OTC catalog serves it inlined.
const jsonSchema2020 = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {
    "address": {
      "$anchor": "addressDef",
      "type": "object",
      "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
    }
  },
  "properties": {
    "name": {"type": "string", "description": "The person's name."},
    "address": {"$ref": "#/$defs/address", "description": "Where the person lives."},
    "contactMethod": {"type": "string", "enum": ["phone", "email"], "description": "How to reach the person."},
    "phone": {"type": "string", "description": "A phone number."},
    "email": {"type": "string", "description": "An email address."}
  },
  "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
  "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
  "then": {"required": ["phone"]},
  "else": {"required": ["email"]},
  "additionalProperties": false
}`
