// The official MCP TypeScript SDK's client in front of a server in search
// mode, at the URL given: it lists the tools (the few a model is shown),
// searches with the query given second, and calls the first tool found
// through the call tool, with the arguments given third (JSON), and the
// same tool by its own name. It prints one JSON object of what it got
// (interop/searchmode_test.go checks it).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, query, args] = process.argv.slice(2);
const client = new Client({ name: 'ts-search', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const out = {};
out.listed = (await client.listTools()).tools.map((t) => t.name);
const searched = await client.callTool({ name: 'search_tools', arguments: { query } });
out.found = searched.structuredContent.tools.map((t) => t.name);
out.schema = searched.structuredContent.tools[0]?.inputSchema ?? null;
const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const through = await client.callTool({ name: 'call_tool', arguments: { name: out.found[0], arguments: JSON.parse(args) } });
out.through = { isError: Boolean(through.isError), text: text(through) };
const direct = await client.callTool({ name: out.found[0], arguments: JSON.parse(args) });
out.direct = { isError: Boolean(direct.isError), text: text(direct) };
console.log(JSON.stringify(out));
await client.close();
