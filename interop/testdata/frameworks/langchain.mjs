// LangChain.js (@langchain/mcp-adapters with @langchain/core, and the
// agent loop of @langchain/langgraph) against a tool server: the adapter
// lists the tools and converts them to LangChain tools, and a ReAct agent
// runs its own tool loop with a scripted chat model built on LangChain's
// BaseChatModel. The model binds the tools as a provider integration does
// (convertToOpenAITool), calls one tool, and ends the loop once it has seen
// the tool's result, which the script reports.
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage } from '@langchain/core/messages';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { calls, report, url } from './common.mjs';

// ScriptedModel answers from a script: the first turn calls call.tool with
// call.input, the next ends the loop. It keeps what it was given.
class ScriptedModel extends BaseChatModel {
  constructor(call, findings, name) {
    super({});
    this.call = call;
    this.findings = findings;
    this.name = name;
  }
  _llmType() { return 'scripted'; }
  bindTools(tools) {
    for (const t of tools) {
      const fn = convertToOpenAITool(t).function;
      this.findings.schemas[fn.name] = fn.parameters;
    }
    return this;
  }
  async _generate(messages) {
    const results = messages.filter((m) => m._getType() === 'tool');
    let message;
    if (results.length === 0) {
      message = new AIMessage({ content: '', tool_calls: [{ id: 'call-' + this.name, name: this.call.tool, args: this.call.input, type: 'tool_call' }] });
    } else {
      this.findings.seen[this.name] = results.map((m) => ({ content: m.content, status: m.status }));
      message = new AIMessage('done');
    }
    return { generations: [{ text: typeof message.content === 'string' ? message.content : '', message }] };
  }
}

const client = new MultiServerMCPClient({ mcpServers: { calculator: { transport: 'http', url } }, useStandardContentBlocks: false });
try {
  const tools = await client.getTools();
  const findings = { framework: 'langchain', tools: tools.map((t) => t.name).sort(), schemas: {}, seen: {} };
  for (const [name, call] of Object.entries(calls)) {
    const agent = createReactAgent({ llm: new ScriptedModel(call, findings, name), tools });
    await agent.invoke({ messages: [{ role: 'user', content: 'Use the tool.' }] }, { recursionLimit: 6 });
  }
  report(findings);
} finally {
  await client.close();
}
