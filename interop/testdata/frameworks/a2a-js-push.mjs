// The official A2A JavaScript SDK (@a2a-js/sdk) asks a tool server's A2A
// agent to post a task's changes to a webhook: over each binding, a text
// message whose configuration names the webhook, then the four push
// notification configuration calls on its task. The argument is JSON
// {url, hook}; the script reports what the client read, the Go test checks
// it and what the webhook received.
import { ClientFactory, ClientFactoryOptions } from '@a2a-js/sdk/client';
import { Role } from '@a2a-js/sdk';
import { report } from './common.mjs';

const { url, hook } = JSON.parse(process.argv[2]);
const plain = (v) => JSON.parse(JSON.stringify(v ?? null, (_, x) => (typeof x === 'bigint' ? Number(x) : x)));

const findings = { framework: 'a2a-js-push', bindings: {} };
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
  const path = hook + '/js-' + binding;
  const tag = binding === 'JSONRPC' ? 'j' : 'r';
  await run('send', () => client.sendMessage({ tenant: '', message: { messageId: 'js-push-' + tag, contextId: '', taskId: '', role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: '6 * 7' }, metadata: undefined, filename: '', mediaType: '' }], metadata: undefined, extensions: [], referenceTaskIds: [] },
    configuration: { acceptedOutputModes: [], taskPushNotificationConfig: { tenant: '', id: '', taskId: '', url: path, token: 'js-token', authentication: undefined }, historyLength: undefined, returnImmediately: true },
    metadata: undefined }));
  const taskId = out.send.ok && out.send.ok.id;
  await run('create', () => client.createTaskPushNotificationConfig({ tenant: '', id: 'js-1', taskId, url: path + '/2', token: '', authentication: { scheme: 'Bearer', credentials: 'js-secret' } }));
  await run('get', () => client.getTaskPushNotificationConfig({ tenant: '', taskId, id: 'js-1' }));
  await run('list', () => client.listTaskPushNotificationConfig({ tenant: '', taskId, pageSize: 0, pageToken: '' }));
  await run('delete', () => client.deleteTaskPushNotificationConfig({ tenant: '', taskId, id: 'js-1' }));
  await run('afterDelete', () => client.getTaskPushNotificationConfig({ tenant: '', taskId, id: 'js-1' }));
  await run('private', () => client.createTaskPushNotificationConfig({ tenant: '', id: '', taskId, url: 'http://10.0.0.1/hook', token: '', authentication: undefined }));
  findings.bindings[binding] = out;
}
report(findings);
