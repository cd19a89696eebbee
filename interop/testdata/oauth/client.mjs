// Signs in to an MCP server with the official TypeScript SDK's
// client-credentials provider and calls tools, printing one JSON line per
// step: node client.mjs SERVER_URL ISSUER CLIENT_ID SECRET SCOPE TOOL...
// SCOPE is what the client asks the authorization server for (its
// client-credentials flow takes the scope from the client's metadata).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';

const [serverUrl, issuer, clientId, clientSecret, scope, ...tools] = process.argv.slice(2);
const out = (o) => console.log(JSON.stringify(o));
const provider = new ClientCredentialsProvider({ clientId, clientSecret, scope, expectedIssuer: issuer });
try {
  const transport = new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider });
  const client = new Client({ name: 'otc-oauth-interop', version: '1.0.0' });
  await client.connect(transport);
  const list = await client.listTools();
  out({ step: 'list', tools: list.tools.map((t) => t.name).sort() });
  for (const name of tools) {
    try {
      const res = await client.callTool({ name, arguments: name === 'Calculator_Add' ? { a: 10, b: 5 } : {} });
      out({ step: 'call', tool: name, isError: !!res.isError, content: res.content });
    } catch (e) {
      out({ step: 'call', tool: name, error: String(e?.message ?? e), code: e?.code });
    }
  }
  const tok = provider.tokens();
  out({ step: 'token', scope: tok?.scope ?? null });
  await client.close();
} catch (e) {
  out({ step: 'fatal', error: String(e?.stack ?? e) });
  process.exitCode = 1;
}
