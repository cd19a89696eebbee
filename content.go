package otc

import (
	"encoding/json"
	"reflect"
)

// Content is a tool result made of content blocks for a model: text,
// images, audio and embedded resources. A tool that returns Content is
// answered over MCP with those blocks as the call's content, rather than
// with a JSON value and its text. Over OTC and the REST view, which have
// no content blocks, it travels as a JSON value: an array of the blocks'
// objects, as the tool's output schema says.
//
//	return otc.Content{
//		otc.TextContent("The chart of last week's sales:"),
//		otc.ImageContent(png, "image/png"),
//	}, nil
type Content []ContentBlock

// ContentBlock is one block of [Content]. Build one with [TextContent],
// [ImageContent], [AudioContent], [ResourceContent] or
// [BlobResourceContent]. Its JSON form is the MCP content block: binary
// data travels as standard base64.
type ContentBlock struct {
	// Type is "text", "image", "audio" or "resource".
	Type string `json:"type" jsonschema:"enum=text,enum=image,enum=audio,enum=resource"`
	// Text is the text of a "text" block.
	Text string `json:"text,omitempty"`
	// Data is the image or audio of an "image" or "audio" block.
	Data []byte `json:"data,omitempty"`
	// MIMEType is the media type of Data, such as "image/png".
	MIMEType string `json:"mimeType,omitempty"`
	// Resource is the resource a "resource" block embeds.
	Resource *EmbeddedResource `json:"resource,omitempty"`
}

// EmbeddedResource is the resource of a "resource" content block: its URI
// and either its text or its binary contents.
type EmbeddedResource struct {
	// URI identifies the resource, such as "file:///notes/today.md".
	URI string `json:"uri"`
	// MIMEType is the resource's media type; empty when unknown.
	MIMEType string `json:"mimeType,omitempty"`
	// Text holds the contents of a text resource.
	Text string `json:"text,omitempty"`
	// Blob holds the contents of a binary resource.
	Blob []byte `json:"blob,omitempty"`
}

// TextContent returns a block of text.
func TextContent(text string) ContentBlock {
	return ContentBlock{Type: "text", Text: text}
}

// ImageContent returns an image, with its media type ("image/png").
func ImageContent(data []byte, mimeType string) ContentBlock {
	return ContentBlock{Type: "image", Data: data, MIMEType: mimeType}
}

// AudioContent returns a sound, with its media type ("audio/wav").
func AudioContent(data []byte, mimeType string) ContentBlock {
	return ContentBlock{Type: "audio", Data: data, MIMEType: mimeType}
}

// ResourceContent returns an embedded text resource.
func ResourceContent(uri, mimeType, text string) ContentBlock {
	return ContentBlock{Type: "resource", Resource: &EmbeddedResource{URI: uri, MIMEType: mimeType, Text: text}}
}

// BlobResourceContent returns an embedded binary resource.
func BlobResourceContent(uri, mimeType string, blob []byte) ContentBlock {
	return ContentBlock{Type: "resource", Resource: &EmbeddedResource{URI: uri, MIMEType: mimeType, Blob: blob}}
}

// contentType is the type a tool returns to answer with content blocks.
var contentType = reflect.TypeFor[Content]()

// MarshalJSON encodes an empty Content as [] rather than null, so that a
// tool that returns no blocks still returns what its schema promises.
func (c Content) MarshalJSON() ([]byte, error) {
	if c == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]ContentBlock(c))
}
