// An A2A agent built with the official JavaScript SDK (@a2a-js/sdk) over
// JSON-RPC: the agent the Go client calls in interop/client_node_test.go.
// "task …" is answered by a task that works, then completes with an
// artifact; anything else by a message echoing the text. It prints its URL
// on the first line.
import express from 'express';
import { randomUUID } from 'node:crypto';
import { Role, TaskState } from '@a2a-js/sdk';
import { DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';

const text = (value) => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: '' });
const textOf = (m) => m.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

class Executor {
  async execute(ctx, bus) {
    const said = textOf(ctx.userMessage);
    const message = (t) => ({ messageId: randomUUID(), contextId: ctx.contextId, taskId: '', role: Role.ROLE_AGENT, parts: [text(t)], metadata: undefined, extensions: [], referenceTaskIds: [] });
    if (!said.startsWith('task')) {
      bus.publish({ kind: 'message', data: message('echo: ' + said) });
      bus.finished();
      return;
    }
    const status = (state) => ({ state, message: undefined, timestamp: undefined });
    bus.publish({ kind: 'task', data: { id: ctx.taskId, contextId: ctx.contextId, status: status(TaskState.TASK_STATE_SUBMITTED), artifacts: [], history: [ctx.userMessage], metadata: undefined } });
    bus.publish({ kind: 'statusUpdate', data: { taskId: ctx.taskId, contextId: ctx.contextId, status: status(TaskState.TASK_STATE_WORKING), metadata: undefined } });
    bus.publish({ kind: 'artifactUpdate', data: { taskId: ctx.taskId, contextId: ctx.contextId, artifact: { artifactId: randomUUID(), name: 'answer', description: '', parts: [text('done: ' + said)], metadata: undefined, extensions: [] }, append: false, lastChunk: true, metadata: undefined } });
    bus.publish({ kind: 'statusUpdate', data: { taskId: ctx.taskId, contextId: ctx.contextId, status: status(TaskState.TASK_STATE_COMPLETED), metadata: undefined } });
    bus.finished();
  }
  async cancelTask() {}
}

const app = express();
const server = app.listen(0, '127.0.0.1', () => {
  const url = `http://127.0.0.1:${server.address().port}`;
  const card = {
    name: 'a2a-js agent', description: 'Echoes.', version: '1.0.0', provider: undefined, capabilities: { streaming: false, pushNotifications: false, extensions: [] },
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' }],
    securitySchemes: {}, securityRequirements: [], defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'echo', description: 'Echoes text.', tags: ['echo'], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
    signatures: [],
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new Executor());
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
  app.use(express.json(), jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  console.log(url);
});
