// The official MCP TypeScript SDK's client (1.x, which speaks 2025-11-25)
// subscribed to calc://memory at the URL given, behind which stand
// replicas with no sticky routing: it calls Memory_Store four times, waits
// after each for notifications/resources/updated (which comes on the
// session's stream, on whichever replica holds it), and reads the number
// back. It prints one JSON object of what it got
// (interop/replicas_test.go checks it).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const client = new Client({ name: 'ts-subscriber', version: '1.0.0' });
const out = { updates: [], values: [] };
let told = null;
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
  out.updates.push(n.params.uri);
  if (told) told();
});
const transport = new StreamableHTTPClientTransport(new URL(process.argv[2]));
await client.connect(transport);
out.protocolVersion = transport.protocolVersion;
out.session = typeof transport.sessionId === 'string' && transport.sessionId.length > 0;
out.capabilities = client.getServerCapabilities().resources;
await client.subscribeResource({ uri: 'calc://memory' });

// waitTold resolves at the next update, or rejects after ms.
const waitTold = (ms) => new Promise((resolve, reject) => {
  const timer = setTimeout(() => { told = null; reject(new Error(`no update within ${ms} ms`)); }, ms);
  told = () => { clearTimeout(timer); told = null; resolve(); };
});

// The SDK opens the session's stream on its own once initialized: the
// first store is made again until its update comes (the stream is open).
let first = false;
for (let i = 0; i < 40 && !first; i++) {
  const wait = waitTold(250);
  await client.callTool({ name: 'Memory_Store', arguments: { value: 0.5 } });
  first = await wait.then(() => true, () => false);
}
out.streamOpened = first;
for (const v of [1.5, 2.5, 3.5, 4.5]) {
  const wait = waitTold(10000);
  await client.callTool({ name: 'Memory_Store', arguments: { value: v } });
  await wait;
  const read = await client.readResource({ uri: 'calc://memory' });
  out.values.push(JSON.parse(read.contents[0].text).value);
}
await client.unsubscribeResource({ uri: 'calc://memory' });
await transport.terminateSession();
await client.close();
console.log(JSON.stringify(out));
