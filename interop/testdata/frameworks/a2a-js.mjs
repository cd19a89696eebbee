// The official A2A JavaScript SDK (@a2a-js/sdk) against a tool server's A2A
// agent: the client factory resolves the Agent Card and, over each binding
// (JSON-RPC and HTTP+JSON), sends a message calling a tool, a message
// calling a tool that fails, one with invalid input, a text message (whose
// task it fetches again with its history), and streams a call.
// The script reports what the client read; the Go test checks it.
import { ClientFactory, ClientFactoryOptions } from '@a2a-js/sdk/client';
import { Role } from '@a2a-js/sdk';
import { report, url } from './common.mjs';

// dataPart is a part holding JSON data, in the SDK's shape.
const dataPart = (value) => ({ content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: '' });

function message(id, data) {
  return { messageId: id, contextId: '', taskId: '', role: Role.ROLE_USER, parts: [dataPart(data)], metadata: undefined, extensions: [], referenceTaskIds: [] };
}

// plain turns the SDK's objects into JSON the report can carry.
const plain = (v) => JSON.parse(JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? Number(x) : x)));

const findings = { framework: 'a2a-js', bindings: {} };
for (const binding of ['JSONRPC', 'HTTP+JSON']) {
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: [binding] }));
  const client = await factory.createFromUrl(url);
  const out = {};
  const run = async (name, f) => {
    try {
      out[name] = { ok: plain(await f()) };
    } catch (e) {
      out[name] = { error: String(e && e.message ? e.message : e) };
    }
  };
  const tag = binding === 'JSONRPC' ? 'j' : 'r';
  await run('quote', () => client.sendMessage({ tenant: '', message: message('js-quote-' + tag, { tool: 'Shipping_Quote', input: { to: { country: 'FR' }, speed: 'express', parcels: 2 } }), configuration: undefined, metadata: undefined }));
  await run('error', () => client.sendMessage({ tenant: '', message: message('js-ring-' + tag, { tool: 'Doorbell_Ring', input: { doorbell_id: 'doorbell1' } }), configuration: undefined, metadata: undefined }));
  await run('invalid', () => client.sendMessage({ tenant: '', message: message('js-bad-' + tag, { tool: 'Shipping_Quote', input: { to: { country: 'france' } } }), configuration: undefined, metadata: undefined }));
  await run('text', () => client.sendMessage({ tenant: '', message: { messageId: 'js-text-' + tag, contextId: '', taskId: '', role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: '2 + 3 * 4' }, metadata: undefined, filename: '', mediaType: '' }], metadata: undefined, extensions: [], referenceTaskIds: [] },
    configuration: undefined, metadata: undefined }));
  // The text's task, fetched again with its history: the caller's message.
  await run('history', () => client.getTask({ tenant: '', id: out.text.ok.id, historyLength: 1 }));
  await run('noHistory', () => client.getTask({ tenant: '', id: out.text.ok.id, historyLength: 0 }));
  await run('stream', async () => {
    const events = [];
    for await (const ev of client.sendMessageStream({ tenant: '', message: message('js-stream-' + tag, { tool: 'Timer_Wait', input: { ms: 300 } }), configuration: undefined, metadata: undefined })) {
      events.push(ev);
    }
    return events;
  });
  findings.bindings[binding] = out;
}
report(findings);
