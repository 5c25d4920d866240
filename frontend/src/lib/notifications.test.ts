import { describe, expect, it } from 'vitest';
import { badge, cardLink, inbox, KINDS, sameDelivery, showsToast, toggleDelivery } from './notifications';
import type { Delivery, Notification } from './notificationtypes';
import type { Pause } from './pausetypes';

function delivery(inApp = true, os = false): Delivery {
  return Object.fromEntries(
    KINDS.map((k) => [k, { mine: { in_app: inApp, os }, automated: { in_app: inApp, os } }]),
  ) as Delivery;
}

const note = (n: Partial<Notification>): Notification => ({
  id: 'nt_1',
  agent_id: 'ag_1',
  run_id: 'rn_1',
  pause_id: '',
  kind: 'info',
  title: 'Hi',
  body: '',
  automated: false,
  created_at: '2025-01-01T10:00:00Z',
  handled_at: null,
  ...n,
});

const pause = (id: string, at: string, status: Pause['status'] = 'open'): Pause => ({
  id,
  run_id: 'rn_1',
  agent_id: 'ag_1',
  session_id: 'se_1',
  tool_call_id: '',
  automated: false,
  created_at: at,
  answered_at: null,
  status,
  kind: 'question',
  request: { questions: [{ question: 'Q?', header: '', options: [], multiple: false }] },
  answer: null,
});

describe('delivery', () => {
  it('flips one box without touching the old matrix or the others', () => {
    const d = delivery();
    const next = toggleDelivery(d, 'approval', 'automated', 'os');
    expect(next.approval.automated.os).toBe(true);
    expect(d.approval.automated.os).toBe(false);
    expect(next.approval.mine.os).toBe(false);
    expect(next.question.automated.os).toBe(false);
    expect(sameDelivery(d, next)).toBe(false);
    expect(sameDelivery(d, toggleDelivery(next, 'approval', 'automated', 'os'))).toBe(true);
  });

  it('fills a kind the server left out', () => {
    const d = delivery();
    delete (d as Partial<Delivery>).credential;
    expect(toggleDelivery(d, 'credential', 'mine', 'in_app').credential.mine).toEqual({ in_app: true, os: false, email: false, hooks: false, phone: false });
  });

  it('toasts by kind and origin, and by default before the settings are known', () => {
    const d = toggleDelivery(delivery(), 'progress', 'automated', 'in_app');
    expect(showsToast(d, note({ kind: 'progress', automated: false }))).toBe(true);
    expect(showsToast(d, note({ kind: 'progress', automated: true }))).toBe(false);
    expect(showsToast(null, note({ kind: 'progress', automated: true }))).toBe(true);
  });
});

describe('to handle', () => {
  it('lists open pauses with their notification and open notifications, newest first; then the handled ones', () => {
    const list = [
      note({ id: 'n1', created_at: '2025-01-01T10:00:00Z' }),
      note({ id: 'n2', kind: 'question', pause_id: 'p1', title: 'Pick a region', created_at: '2025-01-01T11:00:00Z' }),
      note({ id: 'n3', kind: 'done', created_at: '2025-01-01T12:00:00Z', handled_at: '2025-01-01T12:05:00Z' }),
      note({ id: 'n4', kind: 'approval', pause_id: 'p0', created_at: '2025-01-01T09:00:00Z' }), // its pause is closed
      note({ id: 'n5', kind: 'error', created_at: '2025-01-01T13:00:00Z' }),
    ];
    const { open, handled } = inbox(list, [pause('p1', '2025-01-01T11:00:00Z'), pause('p9', '2025-01-01T09:30:00Z', 'answered')]);
    expect(open.map((e) => e.key)).toEqual(['n:n5', 'p:p1', 'n:n1']);
    expect(open[1]!.notification?.title).toBe('Pick a region');
    expect(handled.map((n) => n.id)).toEqual(['n3']);
  });

  it('shows an open pause even without its notification', () => {
    const { open } = inbox([], [pause('p1', '2025-01-01T11:00:00Z')]);
    expect(open).toHaveLength(1);
    expect(open[0]!.notification).toBeUndefined();
  });

  it('counts on a badge', () => {
    expect(badge(0)).toBe('');
    expect(badge(undefined)).toBe('');
    expect(badge(7)).toBe('7');
    expect(badge(120)).toBe('99+');
  });
});

describe('card link', () => {
  it('reads the workspace and notification of a mail or hook link', () => {
    expect(cardLink('?notification=nt_abc123&workspace=ws_x1')).toEqual({ workspace: 'ws_x1', notification: 'nt_abc123' });
    expect(cardLink('')).toBeNull();
    expect(cardLink('?workspace=ws_x1')).toBeNull();
    expect(cardLink('?workspace=../x&notification=nt_1')).toBeNull();
  });
});
