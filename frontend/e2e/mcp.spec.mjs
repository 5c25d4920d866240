// The MCP endpoint seen from outside: the official MCP TypeScript SDK
// (Client + StreamableHTTPClientTransport) against a real `rerun serve`,
// with a key made by `rerun key create` and the fake model server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { rerunBinary, startFakeLLM, startServer } from './harness.mjs';

let llm, server, key;

before(async () => {
  llm = await startFakeLLM();
  server = await startServer({ llm });
  key = execFileSync(rerunBinary(), ['key', 'create', 'sdk e2e', '--data-dir', server.dataDir], { encoding: 'utf8' }).trim();
  assert.match(key, /^rrk_[a-z0-9]+$/);
});

after(async () => {
  await server?.stop();
  await llm?.stop();
});

async function connect(bearer) {
  const client = new Client({ name: 'rerun-e2e', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/api/mcp/account', server.origin), {
    requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
  });
  await client.connect(transport);
  return client;
}

function json(result) {
  assert.equal(result.isError ?? false, false, `tool error: ${result.content?.[0]?.text}`);
  return JSON.parse(result.content[0].text);
}

test('the official SDK lists the tools, creates an agent, sends a message and reads the run', async () => {
  const client = await connect(key);
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const n of ['list_spaces', 'list_agents', 'create_agent', 'send_message', 'list_runs', 'get_run', 'db_query']) {
    assert.ok(names.includes(n), `tool ${n} listed`);
  }
  assert.equal(tools.find((t) => t.name === 'list_agents').annotations.readOnlyHint, true);
  assert.equal(tools.find((t) => t.name === 'delete_agent').annotations.destructiveHint, true);

  const agent = json(await client.callTool({ name: 'create_agent', arguments: { name: 'SDK Helper' } }));
  assert.equal(agent.handle, 'sdk-helper');

  const run = json(await client.callTool({ name: 'send_message', arguments: { agent: '@sdk-helper', message: 'hello', wait_seconds: 30 } }));
  assert.equal(run.status, 'done');
  assert.equal(run.output, 'You said: hello');

  const full = json(await client.callTool({ name: 'get_run', arguments: { run_id: run.id } }));
  assert.deepEqual(full.steps.map((s) => s.kind), ['input', 'model']);
  assert.ok(full.input_tokens > 0);

  const { runs } = json(await client.callTool({ name: 'list_runs', arguments: { agent: '@sdk-helper' } }));
  assert.equal(runs.length, 1);

  const bad = await client.callTool({ name: 'get_agent', arguments: { agent: '@nobody' } });
  assert.equal(bad.isError, true);
  assert.match(bad.content[0].text, /no agent/);
  await client.close();
});

test('a wrong key is refused', async () => {
  await assert.rejects(connect('rrk_not_a_key'), /401|Unauthorized|API key/i);
});
