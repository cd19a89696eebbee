// The official MCP TypeScript SDK's client reading what a server offers
// beside its tools, at the URL given: it lists the resources and templates,
// reads calc://constants and a table of the template, completes the
// template's op, lists the prompts and renders explain_expression (named
// with the prefix given second, through a gateway: "calc_"). It prints one
// JSON object of what it got (interop/resources_test.go checks it).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const prefix = process.argv[3] || '';
const client = new Client({ name: 'ts-readables', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(process.argv[2])));
const out = {};
out.capabilities = client.getServerCapabilities();
out.resources = (await client.listResources()).resources.map((r) => r.uri);
out.templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
out.constants = JSON.parse((await client.readResource({ uri: 'calc://constants' })).contents[0].text);
out.table = (await client.readResource({ uri: 'calc://tables/add/2?upto=2' })).contents[0].text;
out.completion = (await client.complete({ ref: { type: 'ref/resource', uri: 'calc://tables/{op}/{n}{?upto}' }, argument: { name: 'op', value: 'a' } })).completion.values;
out.prompts = (await client.listPrompts()).prompts.map((p) => ({ name: p.name, args: p.arguments.map((a) => a.name + (a.required ? '*' : '')) }));
const got = await client.getPrompt({ name: prefix + 'explain_expression', arguments: { expression: '2 + 2', audience: 'child' } });
out.prompt = got.messages.map((m) => `${m.role}: ${m.content.text}`);
try {
  await client.readResource({ uri: 'calc://tables/pow/2' });
  out.refused = 'no';
} catch (e) {
  out.refused = String(e.code);
}
console.log(JSON.stringify(out));
await client.close();
