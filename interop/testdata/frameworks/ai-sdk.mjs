// The Vercel AI SDK (ai with @ai-sdk/mcp) against a tool server: its MCP
// client lists the tools and converts them to the SDK's tools, and
// generateText's own tool loop, driven by the SDK's mock model, calls them.
// The model is scripted: its first step calls a tool, its second ends the
// loop, having seen the tool's result, which the script reports.
import { createMCPClient } from '@ai-sdk/mcp';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { calls, report, url } from './common.mjs';

const client = await createMCPClient({ transport: { type: 'http', url } });
try {
  const tools = await client.tools();
  const findings = { framework: 'ai-sdk', tools: Object.keys(tools).sort(), schemas: {}, seen: {} };
  const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
  for (const [name, call] of Object.entries(calls)) {
    let step = 0;
    const model = new MockLanguageModelV4({
      doGenerate: async (options) => {
        step++;
        if (step === 1) {
          // What the model is given: the tools as the SDK converted them.
          for (const t of options.tools ?? []) findings.schemas[t.name] = t.inputSchema;
          return {
            content: [{ type: 'tool-call', toolCallId: 'call-' + name, toolName: call.tool, input: JSON.stringify(call.input) }],
            finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [],
          };
        }
        const results = options.prompt.filter((m) => m.role === 'tool').flatMap((m) => m.content);
        findings.seen[name] = results.map((r) => r.output);
        return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
      },
    });
    await generateText({ model, tools, prompt: 'Use the tool.', stopWhen: stepCountIs(3) });
    findings.steps = (findings.steps ?? 0) + step;
  }
  report(findings);
} finally {
  await client.close();
}
