// An MCP server built with the official TypeScript SDK, over Streamable
// HTTP with sessions (or, with the argument "stdio", over standard input
// and output): the server the Go client calls in
// interop/client_node_test.go. Its tools: add (typed), fail (a tool
// error), ask (asks the user's name with elicitation/create, then greets),
// slow (progress, then waits until the client cancels; it prints
// "cancelled" when it sees that). It prints its URL on the first line.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

// say reports what the server saw, on standard output over HTTP; over
// stdio that is the protocol's, so on standard error.
const say = process.argv[2] === 'stdio' ? console.error : console.log;

function tools() {
  const s = new McpServer({ name: 'ts-sdk-server', version: '1.0.0' });
  s.registerTool('add', { description: 'Adds two numbers.', inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }], structuredContent: { sum: a + b } }));
  s.registerTool('fail', { description: 'Fails.' },
    async () => ({ isError: true, content: [{ type: 'text', text: 'the disk is full' }] }));
  s.registerTool('ask', { description: 'Asks your name, then greets you.' }, async (extra) => {
    const answer = await extra.sendRequest({
      method: 'elicitation/create',
      params: { message: 'What is your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
    }, ElicitResultSchema);
    const name = answer.action === 'accept' ? answer.content?.name : 'nobody';
    return { content: [{ type: 'text', text: `hello ${name}` }] };
  });
  s.registerTool('slow', { description: 'Reports progress and waits.' }, async (extra) => {
    const token = extra._meta?.progressToken;
    if (token !== undefined) {
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 2, message: 'half way' } });
    }
    await new Promise((resolve) => {
      const t = setTimeout(resolve, 60000);
      extra.signal.addEventListener('abort', () => { clearTimeout(t); say('cancelled'); resolve(); });
    });
    return { content: [{ type: 'text', text: 'late' }] };
  });
  // Beside the tools: a resource, a template whose variable completes,
  // and a prompt whose argument completes (read by
  // interop/readables_test.go, directly and through otc's gateway).
  s.registerResource('readme', 'ts://readme', { mimeType: 'text/plain', description: 'The readme.' },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'read me' }] }));
  s.registerResource('chapter', new ResourceTemplate('ts://chapters/{n}', {
    list: undefined,
    complete: { n: (value) => ['1', '2', '12'].filter((v) => v.startsWith(value)) },
  }), { description: 'A chapter.' }, async (uri, { n }) => ({ contents: [{ uri: uri.href, text: `chapter ${n}` }] }));
  s.registerPrompt('greet', {
    description: 'Greets someone.',
    argsSchema: { who: completable(z.string(), (value) => ['ada', 'alan', 'grace'].filter((v) => v.startsWith(value))) },
  }, async ({ who }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Greet ${who}.` } }] }));
  return s;
}

if (process.argv[2] === 'stdio') {
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  await tools().connect(new StdioServerTransport());
} else {
  serveHTTP();
}

function serveHTTP() {
const sessions = {};
const server = http.createServer(async (req, res) => {
  let body = '';
  for await (const chunk of req) body += chunk;
  const sid = req.headers['mcp-session-id'];
  let transport = sid ? sessions[sid] : undefined;
  if (!transport) {
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => { sessions[id] = transport; },
    });
    await tools().connect(transport);
  }
  await transport.handleRequest(req, res, body ? JSON.parse(body) : undefined);
});
server.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${server.address().port}/mcp`));
}
