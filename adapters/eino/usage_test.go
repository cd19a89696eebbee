package eino_test

import (
	"context"
	"testing"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/adapters/eino"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/internal/testkit"
)

// askAgent is how a program asks an Eino ReAct agent that calls the tools
// of the tool server at url; chat is any Eino tool-calling chat model
// (OpenAI, Ark, Ollama, ...). docs/client.md shows it.
func askAgent(ctx context.Context, url string, chat model.ToolCallingChatModel) (string, error) {
	// docs:start agent
	c, err := client.New(url, nil)
	if err != nil {
		return "", err
	}
	tools, err := eino.Tools(ctx, c)
	if err != nil {
		return "", err
	}
	agent, err := react.NewAgent(ctx, &react.AgentConfig{
		ToolCallingModel: chat,
		ToolsConfig:      compose.ToolsNodeConfig{Tools: tools},
	})
	if err != nil {
		return "", err
	}
	answer, err := agent.Generate(ctx, []*schema.Message{schema.UserMessage("What does shipping 2 parcels to France cost?")})
	// docs:end agent
	if err != nil {
		return "", err
	}
	return answer.Content, nil
}

// TestUsage runs the documented use with the scripted model.
func TestUsage(t *testing.T) {
	var seen []string
	answer, err := askAgent(t.Context(), testkit.ExampleServer(t, "../.."),
		&scriptedModel{tool: "Shipping_Quote", args: `{"to":{"country":"FR"},"parcels":2}`, seen: &seen})
	require.NoError(t, err)
	assert.Equal(t, "done", answer)
	assert.Equal(t, []string{"standard to FR: 2 parcel(s), 10.00 EUR"}, seen)
}
