// The official A2A JavaScript SDK (@a2a-js/sdk) against A2A agents behind
// each authenticator of this module. For each agent (the JSON array the
// first argument holds: name, url, the credential's header and value), the
// client factory reads the card; getAgentCard, which asks for the extended
// card whenever the card says there is one, is called without credentials;
// then a client whose fetch sends the credential calls a tool. The script
// reports what the client read; the Go test checks it.
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { Role } from '@a2a-js/sdk';
import { report } from './common.mjs';

const agents = JSON.parse(process.argv[2]);
const plain = (v) => JSON.parse(JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? Number(x) : x)));
const dataPart = (value) => ({ content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: '' });

const findings = {};
for (const a of agents) {
  const out = {};
  const run = async (name, f) => {
    try {
      out[name] = { ok: plain(await f()) };
    } catch (e) {
      out[name] = { error: String(e && e.message ? e.message : e) };
    }
  };
  await run('publicCard', async () => {
    const client = await new ClientFactory().createFromUrl(a.url);
    return client.getAgentCard();
  });
  await run('call', async () => {
    const fetchImpl = (url, init = {}) => {
      const headers = new Headers(init.headers || {});
      headers.set(a.header, a.value);
      return fetch(url, { ...init, headers });
    };
    const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      preferredTransports: ['JSONRPC'],
    });
    const client = await new ClientFactory(options).createFromUrl(a.url);
    return client.sendMessage({ tenant: '', message: { messageId: 'js-card-' + a.name, contextId: '', taskId: '', role: Role.ROLE_USER,
      parts: [dataPart({ tool: 'Calculator_Add', input: { a: 2, b: 3 } })], metadata: undefined, extensions: [], referenceTaskIds: [] },
      configuration: undefined, metadata: undefined });
  });
  findings[a.name] = out;
}
report(findings);
