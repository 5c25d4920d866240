import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Agent, Board } from './workspace';
import { WorkspaceState } from './workspace.svelte';

const agent = (id: string, box_id: string): Agent => ({
  id,
  name: id,
  handle: id,
  box_id,
  soul: '',
  provider: '',
  model: '',
  capabilities: [],
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:00:00Z',
});

let board: Board;
let calls: string[];
let failPatch: { status: number; error: string } | null;
let gate: Promise<void> | null;
let bootGate: Promise<void> | null;

beforeEach(() => {
  board = {
    workspace: { id: 'ws_1', name: 'Acme', created_at: '' },
    boxes: [
      { id: 'bx_b', name: 'B', position: 1, created_at: '' },
      { id: 'bx_a', name: 'A', position: 0, created_at: '' },
    ],
    agents: [agent('ag_1', 'bx_a'), agent('ag_2', 'bx_a')],
  };
  calls = [];
  failPatch = null;
  gate = null;
  bootGate = null;
  vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
    const method = init.method ?? 'GET';
    calls.push(`${method} ${url}`);
    const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status });
    if (url === '/api/workspaces') return json(200, { workspaces: [board.workspace], current: 'ws_1' });
    if (url === '/api/capabilities') return json(200, []);
    if (url === '/api/boot') {
      const answer = { workspaces: [board.workspace], current: 'ws_1', capabilities: [], board: structuredClone(board) };
      if (bootGate) await bootGate; // the answer was made before
      return json(200, answer);
    }
    if (url.endsWith('/board')) {
      if (gate) await gate;
      return json(200, structuredClone(board));
    }
    const m = /\/agents\/(ag_\d+)$/.exec(url);
    if (m && method === 'PATCH') {
      if (failPatch) return json(failPatch.status, { error: failPatch.error });
      const a = board.agents.find((x) => x.id === m[1])!;
      Object.assign(a, JSON.parse(init.body as string));
      return json(200, a);
    }
    return json(404, { error: `no route ${method} ${url}` });
  });
});
afterEach(() => vi.unstubAllGlobals());

const boardFetches = () => calls.filter((c) => c.endsWith('/board')).length;

describe('WorkspaceState', () => {
  it('loads the current workspace and sorts boxes by position', async () => {
    const s = new WorkspaceState();
    await s.init();
    expect(s.currentId).toBe('ws_1');
    expect(s.current?.name).toBe('Acme');
    expect(s.boxes.map((b) => b.id)).toEqual(['bx_a', 'bx_b']);
    expect(s.agents).toHaveLength(2);
    expect(calls).toEqual(['GET /api/boot']); // one answer: no chain of requests before the first paint
  });

  it('a board load asked for while the boot answer comes is not overwritten by it', async () => {
    const s = new WorkspaceState();
    let open!: () => void;
    bootGate = new Promise((r) => (open = r));
    const init = s.init();
    await vi.waitFor(() => expect(calls).toEqual(['GET /api/boot']));
    s.currentId = 'ws_1'; // as an event's refresh would find it
    board.agents.push(agent('ag_3', 'bx_b'));
    const later = s.refreshBoard();
    open();
    await Promise.all([init, later]);
    expect(s.agents.map((a) => a.id)).toEqual(['ag_1', 'ag_2', 'ag_3']);
  });

  it('folds refreshes asked for during a load into one more load', async () => {
    const s = new WorkspaceState();
    await s.init();
    calls = [];
    let open!: () => void;
    gate = new Promise((r) => (open = r));
    const first = s.refreshBoard();
    const second = s.refreshBoard();
    const third = s.refreshBoard();
    board.agents.push(agent('ag_3', 'bx_b'));
    gate = null;
    open();
    await Promise.all([first, second, third]);
    expect(boardFetches()).toBe(2);
    expect(s.agents.map((a) => a.id)).toContain('ag_3');
  });

  it('refetches the board only for changes in the workspace it shows', async () => {
    const s = new WorkspaceState();
    await s.init();
    calls = [];
    await s.onChange({ workspace: 'ws_other', kind: 'agent.updated', id: 'ag_9' });
    expect(boardFetches()).toBe(0);
    await s.onChange({ workspace: 'ws_1', kind: 'agent.updated', id: 'ag_1' });
    expect(boardFetches()).toBe(1);
    await s.onChange({ workspace: 'ws_other', kind: 'workspace.created' });
    expect(calls.filter((c) => c === 'GET /api/workspaces')).toHaveLength(1);
    expect(boardFetches()).toBe(1);
    await s.onChange({ workspace: 'ws_1', kind: 'memory.reembed', text: '3/40' });
    expect(boardFetches()).toBe(1);
    await s.onChange({ workspace: 'ws_1', kind: 'template.created', id: 'tp_1' });
    expect(boardFetches()).toBe(1);
  });

  it('refetches the board (the clock badge) when schedules and triggers come and go, not when they fire', async () => {
    const s = new WorkspaceState();
    await s.init();
    calls = [];
    await s.onChange({ workspace: 'ws_1', kind: 'schedule.fired', id: 'sc_1', agent: 'ag_1' });
    await s.onChange({ workspace: 'ws_1', kind: 'trigger.delivery', id: 'tr_1', agent: 'ag_1' });
    expect(boardFetches()).toBe(0);
    await s.onChange({ workspace: 'ws_1', kind: 'schedule.created', id: 'sc_1', agent: 'ag_1' });
    await s.onChange({ workspace: 'ws_1', kind: 'trigger.deleted', id: 'tr_1', agent: 'ag_1' });
    expect(boardFetches()).toBe(2);
  });

  it('shows a move at once and keeps it when the server agrees', async () => {
    const s = new WorkspaceState();
    await s.init();
    const moving = s.moveAgent('ag_1', 'bx_b');
    expect(s.agents.find((a) => a.id === 'ag_1')?.box_id).toBe('bx_b');
    await moving;
    expect(s.agents.find((a) => a.id === 'ag_1')?.box_id).toBe('bx_b');
    expect(calls).toContain('PATCH /api/workspaces/ws_1/agents/ag_1');
  });

  it('puts a refused move back and throws the server message', async () => {
    const s = new WorkspaceState();
    await s.init();
    failPatch = { status: 400, error: 'box bx_b does not exist' };
    await expect(s.moveAgent('ag_1', 'bx_b')).rejects.toThrow('box bx_b does not exist');
    expect(s.agents.find((a) => a.id === 'ag_1')?.box_id).toBe('bx_a');
  });

  it('closes the panel of an agent that disappeared', async () => {
    const s = new WorkspaceState();
    await s.init();
    s.selectedAgentId = 'ag_2';
    expect(s.selectedAgent?.id).toBe('ag_2');
    board.agents = board.agents.filter((a) => a.id !== 'ag_2');
    await s.onChange({ workspace: 'ws_1', kind: 'agent.deleted', id: 'ag_2' });
    expect(s.selectedAgentId).toBeNull();
  });
});
