import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { InboxState } from './inbox.svelte';
import { KINDS } from './notifications';
import { NotificationToasts } from './notify.svelte';
import { toasts } from './toasts.svelte';
import type { Delivery, Notification } from './notificationtypes';

let calls: string[];
let delivery: Delivery;
let notifications: Notification[];

const note = (n: Partial<Notification>): Notification => ({
  id: 'nt_1',
  agent_id: 'ag_1',
  run_id: 'rn_1',
  pause_id: '',
  kind: 'info',
  title: 'Report ready',
  body: '',
  automated: false,
  created_at: '2025-01-01T10:00:00Z',
  handled_at: null,
  ...n,
});

beforeEach(() => {
  calls = [];
  delivery = Object.fromEntries(KINDS.map((k) => [k, { mine: { in_app: true, os: false }, automated: { in_app: false, os: true } }])) as Delivery;
  notifications = [];
  toasts.list = [];
  vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
    const method = init.method ?? 'GET';
    calls.push(`${method} ${url}`);
    const json = (body: unknown) => new Response(JSON.stringify(body), { status: 200 });
    if (url.startsWith('/api/workspaces/ws_1/settings/notifications')) return json(delivery);
    if (url.startsWith('/api/workspaces/ws_1/notifications/dismiss')) return json({ dismissed: 1 });
    if (url.startsWith('/api/workspaces/ws_1/notifications')) return json(notifications);
    if (url.startsWith('/api/workspaces/ws_1/pauses')) return json([]);
    return new Response('{"error":"nope"}', { status: 404 });
  });
});
afterEach(() => vi.unstubAllGlobals());

const name = (id: string) => (id === 'ag_1' ? 'Ada' : '');

describe('notification toasts', () => {
  it('shows one for a run you started when in-app is on, and fetches the settings once', async () => {
    const t = new NotificationToasts();
    notifications = [note({ id: 'nt_1' }), note({ id: 'nt_2', kind: 'error', title: 'Build broke' })];
    await t.onChange({ workspace: 'ws_1', kind: 'notification.created', id: 'nt_1', agent: 'ag_1' }, 'ws_1', name);
    await t.onChange({ workspace: 'ws_1', kind: 'notification.created', id: 'nt_2', agent: 'ag_1' }, 'ws_1', name);
    await t.onChange({ workspace: 'ws_1', kind: 'notification.created', id: 'nt_2', agent: 'ag_1' }, 'ws_1', name);
    expect(toasts.list.map((x) => [x.kind, x.text])).toEqual([
      ['info', 'Ada: Report ready'],
      ['error', 'Ada: Build broke'],
    ]);
    expect(calls.filter((c) => c.includes('settings/notifications'))).toHaveLength(1);
    expect(calls).toContain('GET /api/workspaces/ws_1/notifications?agent_id=ag_1&limit=20');
  });

  it('stays quiet for an automated run when in-app is off for it, and re-reads settings when they change', async () => {
    const t = new NotificationToasts();
    notifications = [note({ id: 'nt_3', automated: true })];
    await t.onChange({ workspace: 'ws_1', kind: 'notification.created', id: 'nt_3', agent: 'ag_1' }, 'ws_1', name);
    expect(toasts.list).toEqual([]);
    delivery.info.automated.in_app = true;
    await t.onChange({ workspace: 'ws_1', kind: 'settings.changed' }, 'ws_1', name);
    notifications = [note({ id: 'nt_4', automated: true })];
    await t.onChange({ workspace: 'ws_1', kind: 'notification.created', id: 'nt_4', agent: 'ag_1' }, 'ws_1', name);
    expect(toasts.list.map((x) => x.text)).toEqual(['Ada: Report ready']);
  });

  it('ignores other workspaces and other events', async () => {
    const t = new NotificationToasts();
    await t.onChange({ workspace: 'ws_2', kind: 'notification.created', id: 'nt_1', agent: 'ag_1' }, 'ws_1', name);
    await t.onChange({ workspace: 'ws_1', kind: 'agent.updated', id: 'ag_1' }, 'ws_1', name);
    expect(calls).toEqual([]);
  });
});

describe('inbox of one agent', () => {
  it('loads its notifications and open pauses, and reloads on its pause and notification events only', async () => {
    notifications = [note({ id: 'nt_1' })];
    const box = new InboxState('ws_1', 'ag_1');
    await box.load();
    expect(box.count).toBe(1);
    expect(calls).toEqual([
      'GET /api/workspaces/ws_1/notifications?agent_id=ag_1&limit=100',
      'GET /api/workspaces/ws_1/pauses?agent_id=ag_1&status=open',
    ]);
    calls = [];
    box.onHuman({ workspace: 'ws_1', kind: 'notification.created', id: 'nt_9', agent: 'ag_2' });
    box.onHuman({ workspace: 'ws_1', kind: 'variables.changed' });
    expect(calls).toEqual([]);
    box.onHuman({ workspace: 'ws_1', kind: 'pause.created', id: 'pz_1', agent: 'ag_1', session: 'se_1' });
    await box.load();
    expect(calls.length).toBeGreaterThanOrEqual(2);
  });

  it('dismisses one notification, or all of the agent', async () => {
    const box = new InboxState('ws_1', 'ag_1');
    await box.dismiss({ key: 'n:nt_1', at: '', notification: note({ id: 'nt_1' }) });
    expect(calls[0]).toBe('POST /api/workspaces/ws_1/notifications/nt_1/dismiss');
    calls = [];
    await box.dismissAll();
    expect(calls[0]).toBe('POST /api/workspaces/ws_1/notifications/dismiss');
  });
});

describe('quiet toasts', () => {
  it('skips a notification already on screen', async () => {
    const t = new NotificationToasts();
    notifications = [note({ id: 'nt_7', kind: 'question', pause_id: 'pz_1' })];
    await t.onChange({ workspace: 'ws_1', kind: 'notification.created', id: 'nt_7', agent: 'ag_1' }, 'ws_1', name, (n) => n.agent_id === 'ag_1');
    expect(toasts.list).toEqual([]);
  });
});
