import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError, api, credentialPrompt, endEarly, errorMessage } from './api';

type Call = { url: string; init: RequestInit };
let calls: Call[];
let answer: () => Response | Promise<Response>;

beforeEach(() => {
  calls = [];
  answer = () => json(200, {});
  vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
    calls.push({ url, init });
    return answer();
  });
});
afterEach(() => vi.unstubAllGlobals());

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
}

const last = () => calls[calls.length - 1]!;
const bodyOf = (c: Call) => JSON.parse(c.init.body as string) as unknown;

describe('the first board, asked for by index.html', () => {
  afterEach(() => endEarly());

  it('takes each early answer once, then asks again', async () => {
    const g = globalThis as { __rerunEarly?: Record<string, Promise<Response>> };
    g.__rerunEarly = { '/api/workspaces/ws_1/board': Promise.resolve(json(200, { agents: ['early'] })) };
    answer = () => json(200, { agents: ['fresh'] });
    await expect(api.getBoard('ws_1')).resolves.toEqual({ agents: ['early'] });
    expect(calls).toHaveLength(0);
    await expect(api.getBoard('ws_1')).resolves.toEqual({ agents: ['fresh'] });
    expect(calls).toHaveLength(1);
  });

  it('forgets the answers not taken once the board is in', async () => {
    const g = globalThis as { __rerunEarly?: Record<string, Promise<Response>> };
    g.__rerunEarly = { '/api/capabilities': Promise.resolve(json(200, ['old'])) };
    endEarly();
    answer = () => json(200, ['new']);
    await expect(api.listCapabilities()).resolves.toEqual(['new']);
    expect(calls).toHaveLength(1);
  });

  it('an early 401 signs out as any other would', async () => {
    const g = globalThis as { __rerunEarly?: Record<string, Promise<Response>> };
    g.__rerunEarly = { '/api/workspaces': Promise.resolve(json(401, { error: 'sign in' })) };
    await expect(api.listWorkspaces()).rejects.toMatchObject({ status: 401 });
    expect(calls).toHaveLength(0);
  });
});

describe('requests', () => {
  it('gets the board of a workspace with the same-origin cookie and no body', async () => {
    const board = { workspace: { id: 'ws_1', name: 'Acme', created_at: '' }, boxes: [], agents: [] };
    answer = () => json(200, board);
    await expect(api.getBoard('ws_1')).resolves.toEqual(board);
    expect(last().url).toBe('/api/workspaces/ws_1/board');
    expect(last().init.method).toBe('GET');
    expect(last().init.credentials).toBe('same-origin');
    expect(last().init.body).toBeUndefined();
  });

  it('sends JSON bodies with a content type', async () => {
    answer = () => json(201, { id: 'bx_1', name: 'Sales', position: 1, created_at: '' });
    const box = await api.createBox('ws_1', 'Sales');
    expect(box.id).toBe('bx_1');
    expect(last().url).toBe('/api/workspaces/ws_1/boxes');
    expect(last().init.method).toBe('POST');
    expect((last().init.headers as Record<string, string>)['Content-Type']).toBe('application/json');
    expect(bodyOf(last())).toEqual({ name: 'Sales' });
  });

  it('patches only the given agent fields', async () => {
    answer = () => json(200, { id: 'ag_1' });
    await api.updateAgent('ws_1', 'ag_1', { box_id: 'bx_2' });
    expect(last().url).toBe('/api/workspaces/ws_1/agents/ag_1');
    expect(last().init.method).toBe('PATCH');
    expect(bodyOf(last())).toEqual({ box_id: 'bx_2' });
  });

  it('puts the full box order', async () => {
    answer = () => json(200, []);
    await api.reorderBoxes('ws_1', ['bx_2', 'bx_1']);
    expect(last().init.method).toBe('PUT');
    expect(last().url).toBe('/api/workspaces/ws_1/boxes/order');
    expect(bodyOf(last())).toEqual({ ids: ['bx_2', 'bx_1'] });
  });

  it('encodes the name and workspace when deriving a handle', async () => {
    answer = () => json(200, { handle: 'ada-lovelace' });
    await expect(api.deriveHandle('Ada Lovelace & co', 'ws_1')).resolves.toEqual({ handle: 'ada-lovelace' });
    const url = new URL(last().url, 'http://x');
    expect(url.pathname).toBe('/api/handle');
    expect(url.searchParams.get('name')).toBe('Ada Lovelace & co');
    expect(url.searchParams.get('ws')).toBe('ws_1');
  });

  it('escapes ids in paths', async () => {
    answer = () => json(200, []);
    await api.listSouls('ws 1', 'ag/1');
    expect(last().url).toBe('/api/workspaces/ws%201/agents/ag%2F1/souls');
  });

  it('resolves a 204 to undefined', async () => {
    answer = () => new Response(null, { status: 204 });
    await expect(api.deleteAgent('ws_1', 'ag_1')).resolves.toBeUndefined();
    expect(last().init.method).toBe('DELETE');
  });

  it('posts a switch with no body', async () => {
    answer = () => json(200, { current: 'ws_2' });
    await expect(api.switchWorkspace('ws_2')).resolves.toEqual({ current: 'ws_2' });
    expect(last().url).toBe('/api/workspaces/ws_2/switch');
    expect(last().init.body).toBeUndefined();
  });
});

describe('errors', () => {
  it("throws the server's error message with its status", async () => {
    answer = () => json(409, { error: 'Box "Sales" still has 2 coworkers: move them first.' });
    const err = await api.deleteBox('ws_1', 'bx_1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(409);
    expect(errorMessage(err)).toBe('Box "Sales" still has 2 coworkers: move them first.');
  });

  it('uses a plain-text body when it is not JSON', async () => {
    answer = () => new Response('bad gateway thing', { status: 502 });
    const err = (await api.listCapabilities().catch((e: unknown) => e)) as ApiError;
    expect(err.status).toBe(502);
    expect(err.message).toBe('bad gateway thing');
  });

  it('says what to do on 401 without a body', async () => {
    answer = () => new Response('', { status: 401 });
    const err = (await api.listWorkspaces().catch((e: unknown) => e)) as ApiError;
    expect(err.status).toBe(401);
    expect(err.message).toMatch(/no longer signed in/);
  });

  it('turns a network failure into status 0', async () => {
    answer = () => Promise.reject(new TypeError('Failed to fetch'));
    const err = (await api.listWorkspaces().catch((e: unknown) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(0);
    expect(err.message).toMatch(/Cannot reach Rerun/);
  });

  it('rejects a success that is not JSON', async () => {
    answer = () => new Response('<html>', { status: 200 });
    await expect(api.listWorkspaces()).rejects.toThrow(/not JSON/);
  });
});

describe('memory and skills', () => {
  it('lists memories with a search and retired ones', async () => {
    answer = () => json(200, []);
    await api.listMemories('ws_1', 'ag_1');
    expect(last().url).toBe('/api/workspaces/ws_1/agents/ag_1/memories');
    await api.listMemories('ws_1', 'ag_1', { q: ' billing & co ', retired: true });
    expect(last().url).toBe('/api/workspaces/ws_1/agents/ag_1/memories?q=billing+%26+co&retired=1');
  });

  it('adds, edits and deletes memories', async () => {
    answer = () => json(201, { memory: { id: 'mem_1' }, reason: '' });
    await api.addMemory('ws_1', 'ag_1', 'Invoices go to billing');
    expect(last().init.method).toBe('POST');
    expect(bodyOf(last())).toEqual({ text: 'Invoices go to billing' });
    await api.addMemory('ws_1', 'ag_1', 'Invoices go to ap', 'mem_1');
    expect(bodyOf(last())).toEqual({ text: 'Invoices go to ap', supersedes: 'mem_1' });
    answer = () => json(200, { id: 'mem_1' });
    await api.updateMemory('ws_1', 'mem_1', 'new');
    expect(last().url).toBe('/api/workspaces/ws_1/memories/mem_1');
    expect(last().init.method).toBe('PATCH');
    expect(bodyOf(last())).toEqual({ text: 'new' });
    answer = () => new Response(null, { status: 204 });
    await api.deleteMemory('ws_1', 'mem_1');
    expect(last().init.method).toBe('DELETE');
  });

  it('saves a skill as its whole SKILL.md', async () => {
    answer = () => json(200, { name: 'triage-inbox' });
    await api.saveSkill('ws_1', 'ag_1', 'triage-inbox', '---\nname: triage-inbox\n---\n');
    expect(last().url).toBe('/api/workspaces/ws_1/agents/ag_1/skills/triage-inbox');
    expect(last().init.method).toBe('PUT');
    expect(bodyOf(last())).toEqual({ skill_md: '---\nname: triage-inbox\n---\n' });
    await api.skillVersions('ws_1', 'ag_1', 'triage-inbox');
    expect(last().url).toBe('/api/workspaces/ws_1/agents/ag_1/skills/triage-inbox/versions');
  });

  it('imports a zip as the raw body and shows the refusal', async () => {
    const zip = new Uint8Array([0x50, 0x4b, 3, 4]).buffer;
    answer = () => json(400, { error: 'refused archive: entry "../evil/SKILL.md" points outside the skill folder' });
    await expect(api.importSkill('ws_1', 'ag_1', zip)).rejects.toThrow(/points outside/);
    expect(last().url).toBe('/api/workspaces/ws_1/agents/ag_1/skills/import');
    expect(last().init.method).toBe('POST');
    expect((last().init.headers as Record<string, string>)['Content-Type']).toBe('application/zip');
    expect(last().init.body).toBe(zip);
  });

  it('gives the export address', () => {
    expect(api.skillExportUrl('ws_1', 'ag_1', 'pdf-tools')).toBe('/api/workspaces/ws_1/agents/ag_1/skills/pdf-tools/export');
  });
});

describe('human in the loop', () => {
  it('lists open pauses of an agent and answers one', async () => {
    answer = () => json(200, []);
    await api.listPauses('ws_1', { agent_id: 'ag_1', status: 'open' });
    expect(last().url).toBe('/api/workspaces/ws_1/pauses?agent_id=ag_1&status=open');
    await api.listPauses('ws_1');
    expect(last().url).toBe('/api/workspaces/ws_1/pauses');
    answer = () => json(200, { id: 'pz_1' });
    await api.answerPause('ws_1', 'pz_1', { answers: ['EU'] });
    expect(last().init.method).toBe('POST');
    expect(last().url).toBe('/api/workspaces/ws_1/pauses/pz_1/answer');
    expect(bodyOf(last())).toEqual({ answers: ['EU'] });
    await api.answerPause('ws_1', 'pz_1', { dismiss: true });
    expect(bodyOf(last())).toEqual({ dismiss: true });
  });

  it('shows what to fix when an answer does not fit', async () => {
    answer = () => json(400, { error: 'decide every item: a2 has no decision' });
    await expect(api.answerPause('ws_1', 'pz_1', { decisions: [] })).rejects.toMatchObject({ status: 400, message: 'decide every item: a2 has no decision' });
  });

  it('lists, dismisses and dismisses all notifications', async () => {
    answer = () => json(200, []);
    await api.listNotifications('ws_1', { open: true, limit: 50 });
    expect(last().url).toBe('/api/workspaces/ws_1/notifications?open=1&limit=50');
    await api.listNotifications('ws_1', { agent_id: 'ag_1', open: false });
    expect(last().url).toBe('/api/workspaces/ws_1/notifications?agent_id=ag_1');
    answer = () => json(200, { id: 'nt_1' });
    await api.dismissNotification('ws_1', 'nt_1');
    expect(last().url).toBe('/api/workspaces/ws_1/notifications/nt_1/dismiss');
    expect(last().init.method).toBe('POST');
    answer = () => json(200, { dismissed: 2 });
    await api.dismissAllNotifications('ws_1', 'ag_1');
    expect(last().url).toBe('/api/workspaces/ws_1/notifications/dismiss');
    expect(bodyOf(last())).toEqual({ agent_id: 'ag_1' });
    await api.dismissAllNotifications('ws_1');
    expect(bodyOf(last())).toEqual({});
  });

  it('reads and puts the whole delivery matrix', async () => {
    const d = { info: { mine: { in_app: true, os: false }, automated: { in_app: false, os: true } } };
    answer = () => json(200, d);
    await api.getDelivery('ws_1');
    expect(last().url).toBe('/api/workspaces/ws_1/settings/notifications');
    await api.saveDelivery('ws_1', d as never);
    expect(last().init.method).toBe('PUT');
    expect(bodyOf(last())).toEqual(d);
  });

  it('sets and deletes variables by name; the value is only ever sent', async () => {
    answer = () => json(200, { name: 'API_KEY', created_at: '', updated_at: '' });
    const v = await api.setVariable('ws_1', 'API_KEY', 'sk-123');
    expect(v).not.toHaveProperty('value');
    expect(last().init.method).toBe('PUT');
    expect(last().url).toBe('/api/workspaces/ws_1/variables/API_KEY');
    expect(bodyOf(last())).toEqual({ value: 'sk-123' });
    answer = () => new Response(null, { status: 204 });
    await api.deleteVariable('ws_1', 'API_KEY');
    expect(last().init.method).toBe('DELETE');
  });

  it('patches the ask-first switches', async () => {
    answer = () => json(200, { id: 'ag_1' });
    await api.updateAgent('ws_1', 'ag_1', { ask_first: { shell: false } });
    expect(bodyOf(last())).toEqual({ ask_first: { shell: false } });
  });

  it('creates, patches, runs and deletes schedules', async () => {
    answer = () => json(201, { id: 'sc_1' });
    await api.createSchedule('ws_1', 'ag_1', { name: 'Digest', instruction: 'Sum up', kind: 'cron', cron: '0 9 * * *', timezone: 'Europe/Berlin' });
    expect(last().init.method).toBe('POST');
    expect(last().url).toBe('/api/workspaces/ws_1/agents/ag_1/schedules');
    expect(bodyOf(last())).toEqual({ name: 'Digest', instruction: 'Sum up', kind: 'cron', cron: '0 9 * * *', timezone: 'Europe/Berlin' });
    answer = () => json(200, { id: 'sc_1' });
    await api.updateSchedule('ws_1', 'sc_1', { enabled: false });
    expect(last().init.method).toBe('PATCH');
    expect(last().url).toBe('/api/workspaces/ws_1/schedules/sc_1');
    expect(bodyOf(last())).toEqual({ enabled: false });
    await api.runSchedule('ws_1', 'sc_1');
    expect([last().init.method, last().url]).toEqual(['POST', '/api/workspaces/ws_1/schedules/sc_1/run']);
    answer = () => json(200, []);
    await api.scheduleHistory('ws_1', 'sc_1', 20);
    expect(last().url).toBe('/api/workspaces/ws_1/schedules/sc_1/history?limit=20');
    await api.nextFires('ws_1', 'sc_1');
    expect(last().url).toBe('/api/workspaces/ws_1/schedules/sc_1/next?n=5');
    answer = () => new Response(null, { status: 204 });
    await api.deleteSchedule('ws_1', 'sc_1');
    expect([last().init.method, last().url]).toEqual(['DELETE', '/api/workspaces/ws_1/schedules/sc_1']);
  });

  it("previews a schedule and shows the server's reason inline", async () => {
    answer = () => json(200, { description: 'Every day at 09:00', next: ['2025-03-03T09:00:00+01:00'] });
    const p = await api.previewSchedule({ kind: 'cron', cron: '0 9 * * *', timezone: 'Europe/Berlin', at: null });
    expect(p.description).toBe('Every day at 09:00');
    expect(last().url).toBe('/api/schedules/preview');
    answer = () => json(400, { error: 'cron: expected 5 fields, found 2' });
    await expect(api.previewSchedule({ kind: 'cron', cron: '0 9', timezone: 'UTC', at: null })).rejects.toMatchObject({
      status: 400,
      message: 'cron: expected 5 fields, found 2',
    });
  });

  it('creates, rotates, tests and lists deliveries of triggers', async () => {
    answer = () => json(201, { trigger: { id: 'tr_1' }, url: 'http://127.0.0.1:7777/hooks/rrh_secret' });
    const made = await api.createTrigger('ws_1', 'ag_1', { name: 'CI', instruction: 'Look', methods: ['POST'] });
    expect(made.url).toContain('rrh_secret');
    expect(last().url).toBe('/api/workspaces/ws_1/agents/ag_1/triggers');
    await api.rotateTrigger('ws_1', 'tr_1', 3600);
    expect(last().url).toBe('/api/workspaces/ws_1/triggers/tr_1/rotate');
    expect(bodyOf(last())).toEqual({ grace_seconds: 3600 });
    await api.rotateTrigger('ws_1', 'tr_1');
    expect(bodyOf(last())).toEqual({ grace_seconds: 0 });
    answer = () => json(200, { id: 'dl_1', run_id: 'rn_1' });
    await api.testTrigger('ws_1', 'tr_1', '{"a":1}', 'application/json');
    expect(last().url).toBe('/api/workspaces/ws_1/triggers/tr_1/test');
    expect(bodyOf(last())).toEqual({ payload: '{"a":1}', content_type: 'application/json' });
    await api.updateTrigger('ws_1', 'tr_1', { signing_secret_var: '' });
    expect([last().init.method, last().url]).toEqual(['PATCH', '/api/workspaces/ws_1/triggers/tr_1']);
    expect(bodyOf(last())).toEqual({ signing_secret_var: '' });
    answer = () => json(200, []);
    await api.triggerDeliveries('ws_1', 'tr_1');
    expect(last().url).toBe('/api/workspaces/ws_1/triggers/tr_1/deliveries?limit=50');
  });
});

describe('templates', () => {
  it('saves an agent as a template and reads its preview', async () => {
    answer = () => json(200, { included: [], left_out: [] });
    await api.templatePreview('ws_1', 'ag_1');
    expect(last().url).toBe('/api/workspaces/ws_1/agents/ag_1/template-preview');
    answer = () => json(201, { id: 'tp_1' });
    await api.createTemplate('ws_1', { from_agent: 'ag_1', name: 'Scout' });
    expect(last().url).toBe('/api/workspaces/ws_1/templates');
    expect(last().init.method).toBe('POST');
    expect(bodyOf(last())).toEqual({ from_agent: 'ag_1', name: 'Scout' });
  });

  it('installs into a box and gives the agent and its cards', async () => {
    answer = () => json(201, { agent: { id: 'ag_2' }, cards: ['Fill HUBSPOT_TOKEN'] });
    await expect(api.installTemplate('ws_1', 'tp_1', { box_id: 'bx_1' })).resolves.toEqual({ agent: { id: 'ag_2' }, cards: ['Fill HUBSPOT_TOKEN'] });
    expect(last().url).toBe('/api/workspaces/ws_1/templates/tp_1/install');
    expect(bodyOf(last())).toEqual({ box_id: 'bx_1' });
  });

  it('imports the file as the raw body and shows the refusal', async () => {
    const file = new Blob(['PK'], { type: 'application/octet-stream' });
    answer = () => json(400, { error: 'template.json: memories are never part of a template; export it again' });
    await expect(api.importTemplate('ws_1', file)).rejects.toMatchObject({ status: 400, message: /memories are never part/ });
    expect(last().url).toBe('/api/workspaces/ws_1/templates/import');
    expect((last().init.headers as Record<string, string>)['Content-Type']).toBe('application/zip');
    expect(last().init.body).toBe(file);
  });

  it('deletes one and gives the export address', async () => {
    answer = () => new Response(null, { status: 204 });
    await api.deleteTemplate('ws_1', 'tp_1');
    expect(last().init.method).toBe('DELETE');
    expect(last().url).toBe('/api/workspaces/ws_1/templates/tp_1');
    expect(api.templateExportUrl('ws_1', 'tp 1')).toBe('/api/workspaces/ws_1/templates/tp%201/export');
  });
});

describe('credential-like text', () => {
  const refusal = () =>
    json(400, { error: 'the soul holds what looks like an AWS access key (AKIAIO…)', code: 'credential_like' });

  it('asks the person and sends again with allow_credential_like when they say it is no secret', async () => {
    const asked: string[] = [];
    const confirm = credentialPrompt.confirm;
    credentialPrompt.confirm = (m) => (asked.push(m), true);
    try {
      answer = () => (calls.length === 1 ? refusal() : json(200, { id: 'ag_1' }));
      await api.updateAgent('ws_1', 'ag_1', { soul: 'AKIAIOSFODNN7EXAMPLE' });
    } finally {
      credentialPrompt.confirm = confirm;
    }
    expect(asked).toEqual(['the soul holds what looks like an AWS access key (AKIAIO…)']);
    expect(calls.map((c) => c.url)).toEqual([
      '/api/workspaces/ws_1/agents/ag_1',
      '/api/workspaces/ws_1/agents/ag_1?allow_credential_like=true',
    ]);
    expect(bodyOf(last())).toEqual({ soul: 'AKIAIOSFODNN7EXAMPLE' });
  });

  it('keeps the refusal, with its code, when the person says no', async () => {
    const confirm = credentialPrompt.confirm;
    credentialPrompt.confirm = () => false;
    answer = refusal;
    try {
      const err = await api.updateAgent('ws_1', 'ag_1', { soul: 'x' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).code).toBe('credential_like');
    } finally {
      credentialPrompt.confirm = confirm;
    }
    expect(calls).toHaveLength(1);
  });
});
