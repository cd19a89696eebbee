// An MCP server of protocol version 2025-03-26, built with the official
// TypeScript SDK of that time (1.11.0, installed as sdk-2025-03-26 by
// .ci/frameworks-deps.sh), which answers initialize with 2025-03-26
// whatever newer version a client asks for. Over standard input and output
// (no argument), Streamable HTTP ("http": /mcp, with sessions) or the
// HTTP+SSE transport ("sse": GET /sse, POST /message); over HTTP it prints
// its URL on the first line. Its tools: add (two numbers, answered as
// text) and whoami (the server's name and version). The schemas are plain
// JSON: the SDK of that time wants zod 3, which is not the zod installed
// beside it.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { Server } from 'sdk-2025-03-26/server/index.js';
import { StdioServerTransport } from 'sdk-2025-03-26/server/stdio.js';
import { StreamableHTTPServerTransport } from 'sdk-2025-03-26/server/streamableHttp.js';
import { SSEServerTransport } from 'sdk-2025-03-26/server/sse.js';
import { ListToolsRequestSchema, CallToolRequestSchema } from 'sdk-2025-03-26/types.js';

function server() {
  const s = new Server({ name: 'sdk-2025-03-26', version: '1.11.0' }, { capabilities: { tools: {} } });
  s.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      { name: 'add', description: 'Adds two numbers.', inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] } },
      { name: 'whoami', description: 'Names the server.', inputSchema: { type: 'object', properties: {} } },
    ],
  }));
  s.setRequestHandler(CallToolRequestSchema, async (req) => {
    const args = req.params.arguments ?? {};
    switch (req.params.name) {
      case 'add':
        return { content: [{ type: 'text', text: String(args.a + args.b) }] };
      case 'whoami':
        return { content: [{ type: 'text', text: 'sdk-2025-03-26' }] };
    }
    return { isError: true, content: [{ type: 'text', text: `no tool ${req.params.name}` }] };
  });
  return s;
}

function body(req) {
  return new Promise((resolve, reject) => {
    let data = '';
    req.on('data', (c) => { data += c; });
    req.on('end', () => { try { resolve(data ? JSON.parse(data) : undefined); } catch (e) { reject(e); } });
  });
}

const mode = process.argv[2] ?? 'stdio';
if (mode === 'stdio') {
  await server().connect(new StdioServerTransport());
} else {
  const sessions = new Map();
  const web = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://localhost');
    try {
      if (mode === 'http' && url.pathname === '/mcp') {
        const id = req.headers['mcp-session-id'];
        let t = id && sessions.get(id);
        const parsed = req.method === 'POST' ? await body(req) : undefined;
        if (!t) {
          t = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (sid) => sessions.set(sid, t) });
          await server().connect(t);
        }
        await t.handleRequest(req, res, parsed);
        return;
      }
      if (mode === 'sse' && url.pathname === '/sse' && req.method === 'GET') {
        const t = new SSEServerTransport('/message', res);
        sessions.set(t.sessionId, t);
        res.on('close', () => sessions.delete(t.sessionId));
        await server().connect(t);
        return;
      }
      if (mode === 'sse' && url.pathname === '/message' && req.method === 'POST') {
        const t = sessions.get(url.searchParams.get('sessionId'));
        if (!t) { res.writeHead(404).end('no such session'); return; }
        await t.handlePostMessage(req, res, await body(req));
        return;
      }
      res.writeHead(404).end('not found');
    } catch (e) {
      if (!res.headersSent) res.writeHead(500).end(String(e));
    }
  });
  web.listen(0, '127.0.0.1', () => {
    const { port } = web.address();
    console.log(`http://127.0.0.1:${port}${mode === 'http' ? '/mcp' : '/sse'}`);
  });
}
