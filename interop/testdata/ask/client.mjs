// Calls the asking tools of an MCP server with the official TypeScript
// SDK's client, answering its elicitation and sampling requests, and
// prints one JSON line per step:
//   node client.mjs http SERVER_URL
//   node client.mjs stdio COMMAND [ARG...]   (the command's environment is ours)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const [mode, target, ...rest] = process.argv.slice(2);
const out = (o) => console.log(JSON.stringify(o));
try {
  const transport = mode === 'http'
    ? new StreamableHTTPClientTransport(new URL(target))
    : new StdioClientTransport({ command: target, args: rest, env: { ...process.env }, stderr: 'inherit' });
  const client = new Client({ name: 'otc-ask-interop', version: '1.0.0' }, { capabilities: { elicitation: {}, sampling: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    out({ step: 'elicit', message: req.params.message });
    return { action: 'accept', content: { reason: 'damaged' } };
  });
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    out({ step: 'sample', text: req.params.messages[0].content.text });
    return { role: 'assistant', model: 'test-model', content: { type: 'text', text: 'short' } };
  });
  await client.connect(transport);
  out({ step: 'connected', version: transport.protocolVersion ?? null });
  const calls = [['Shop_Refund', { order: 'A-1001', amount: 250 }], ['Shop_Summarize', { text: 'a long text' }]];
  for (const [name, args] of calls) {
    try {
      const res = await client.callTool({ name, arguments: args });
      out({ step: 'call', tool: name, isError: !!res.isError, content: res.content });
    } catch (e) {
      out({ step: 'call', tool: name, error: String(e?.message ?? e), code: e?.code });
    }
  }
  await client.close();
} catch (e) {
  out({ step: 'fatal', error: String(e?.stack ?? e) });
  process.exitCode = 1;
}
