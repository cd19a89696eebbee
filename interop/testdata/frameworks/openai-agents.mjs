// The OpenAI Agents SDK (@openai/agents) against a tool server: an agent
// with the server as its MCP server, tool schemas converted to OpenAI's
// strict mode (mcpConfig.convertSchemasToStrict), and the SDK's own run
// loop driving a scripted model that implements the SDK's Model
// interface. The model calls one tool, as a strict-mode model does (every
// property sent, null for those it leaves out), and ends the run once it
// has seen the tool's result, which the script reports.
import { Agent, MCPServerStreamableHttp, Usage, getAllMcpTools, run, setTracingDisabled } from '@openai/agents';
import { calls, report, url } from './common.mjs';

// ScriptedModel answers from a script: the first turn calls call.tool with
// input, the next ends the run. It keeps what it was given.
class ScriptedModel {
  constructor(call, input, findings, name) {
    Object.assign(this, { call, input, findings, name });
  }
  async getResponse(request) {
    const items = Array.isArray(request.input) ? request.input : [];
    const results = items.filter((i) => i.type === 'function_call_result');
    if (results.length === 0) {
      for (const t of request.tools) {
        if (t.type === 'function') this.findings.schemas[t.name] = { strict: t.strict, parameters: t.parameters };
      }
      return {
        usage: new Usage(),
        output: [{ type: 'function_call', callId: 'call-' + this.name, name: this.call.tool, arguments: JSON.stringify(this.input), status: 'completed' }],
      };
    }
    this.findings.seen[this.name] = results.map((r) => r.output);
    return {
      usage: new Usage(),
      output: [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'done' }] }],
    };
  }
  async *getStreamedResponse() {
    throw new Error('the scripted model does not stream');
  }
}

// strictInput is what a strict-mode model sends for input: every property
// of the tool's schema, null for those the call leaves out.
function strictInput(input, schema) {
  const out = {};
  for (const [k, p] of Object.entries(schema?.properties ?? {})) {
    const v = input[k];
    const obj = (p.anyOf ?? [p]).find((b) => b.type === 'object');
    out[k] = v === undefined ? null : obj && v && typeof v === 'object' ? strictInput(v, obj) : v;
  }
  return out;
}

setTracingDisabled(true);
const server = new MCPServerStreamableHttp({ url, name: 'calculator' });
await server.connect();
try {
  const findings = { framework: 'openai-agents', tools: (await server.listTools()).map((t) => t.name).sort(), schemas: {}, seen: {} };
  // The schemas as the SDK converts them for the model, which decide what
  // a strict-mode model sends.
  const listed = {};
  for (const t of await getAllMcpTools({ mcpServers: [server], convertSchemasToStrict: true })) listed[t.name] = t.parameters;
  for (const [name, call] of Object.entries(calls)) {
    const input = strictInput(call.input, listed[call.tool]);
    const agent = new Agent({ name: 'caller', mcpServers: [server], mcpConfig: { convertSchemasToStrict: true },
      model: new ScriptedModel(call, input, findings, name) });
    await run(agent, 'Use the tool.', { maxTurns: 4 });
    findings.sent = { ...(findings.sent ?? {}), [name]: input };
  }
  report(findings);
} finally {
  await server.close();
}
