// Notifications and what waits for a person (pure): the To handle list, the
// delivery matrix, and whether a new notification shows a toast.
import { kinds, PAUSE_KINDS } from './pauses';
import type { Channel, Delivery, Notification, NotificationKind, Origin } from './notificationtypes';
import type { Pause } from './pausetypes';

/** The pause kinds first, then what agents send. */
export const KINDS: NotificationKind[] = [...PAUSE_KINDS, 'info', 'progress', 'done', 'error'];

export const KIND_LABEL: Record<NotificationKind, string> = {
  ...(Object.fromEntries(PAUSE_KINDS.map((k) => [k, kinds[k].label])) as Record<(typeof PAUSE_KINDS)[number], string>),
  info: 'Info',
  progress: 'Progress',
  done: 'Done',
  error: 'Error',
};

export const ORIGINS: { id: Origin; label: string }[] = [
  { id: 'mine', label: 'Runs you started' },
  { id: 'automated', label: 'Runs that fired on their own' },
];

export const CHANNELS: { id: Channel; label: string }[] = [
  { id: 'in_app', label: 'In app' },
  { id: 'os', label: 'OS notification' },
  { id: 'email', label: 'Email' },
  { id: 'hooks', label: 'Hooks' },
  { id: 'phone', label: 'Phone' },
];

export const originOf = (n: { automated: boolean }): Origin => (n.automated ? 'automated' : 'mine');

/** Whether a new notification shows a toast in this window (in app, for its kind and origin). Unknown settings: yes. */
export function showsToast(delivery: Delivery | null, n: Notification): boolean {
  return delivery?.[n.kind]?.[originOf(n)]?.in_app ?? true;
}

/** The matrix with one box flipped (a new object; the old one is left alone). */
export function toggleDelivery(d: Delivery, kind: NotificationKind, origin: Origin, channel: Channel): Delivery {
  const next: Delivery = JSON.parse(JSON.stringify(d)); // d may be a reactive proxy, which structuredClone refuses
  const cell = next[kind]?.[origin] ?? { in_app: false, os: false, email: false, hooks: false, phone: false };
  next[kind] = { ...next[kind], [origin]: { ...cell, [channel]: !cell[channel] } };
  return next;
}

export function sameDelivery(a: Delivery | null, b: Delivery | null): boolean {
  if (!a || !b) return a === b;
  return KINDS.every((k) =>
    ORIGINS.every((o) => CHANNELS.every((c) => !!a[k]?.[o.id]?.[c.id] === !!b[k]?.[o.id]?.[c.id])),
  );
}

/** One row of "To handle": an open pause (with its notification when there is one) or a notification. */
export type InboxEntry = { key: string; at: string; notification?: Notification; pause?: Pause };

const newestFirst = (a: { at: string }, b: { at: string }) => b.at.localeCompare(a.at);

/**
 * What waits for a person, newest first: every open pause (answered in its chat)
 * and every open notification not raised by a pause; then the handled
 * notifications, newest first.
 */
export function inbox(notifications: Notification[], openPauses: Pause[]): { open: InboxEntry[]; handled: Notification[] } {
  const pauses = openPauses.filter((p) => p.status === 'open');
  const byPause = new Map(notifications.filter((n) => n.pause_id).map((n) => [n.pause_id, n]));
  const open: InboxEntry[] = [
    ...pauses.map((p) => ({ key: `p:${p.id}`, at: p.created_at, pause: p, notification: byPause.get(p.id) })),
    ...notifications
      // A pause's own notification is shown with its pause (or not at all once the pause closed).
      .filter((n) => !n.handled_at && !n.pause_id)
      .map((n) => ({ key: `n:${n.id}`, at: n.created_at, notification: n })),
  ].sort(newestFirst);
  const handled = notifications.filter((n) => n.handled_at).sort((a, b) => b.created_at.localeCompare(a.created_at));
  return { open, handled };
}

/** A count on a badge: "" for none, "99+" past 99. */
export const badge = (n: number | undefined): string => (!n || n <= 0 ? '' : n > 99 ? '99+' : String(n));

/**
 * The card a mail or hook links to: the app's address with
 * ?workspace=ws_…&notification=nt_… (see backend/outbox Link). null when the
 * page was opened without one.
 */
export function cardLink(search: string): { workspace: string; notification: string } | null {
  const q = new URLSearchParams(search);
  const workspace = q.get('workspace') ?? '';
  const notification = q.get('notification') ?? '';
  if (!/^ws_[A-Za-z0-9_-]+$/.test(workspace) || !/^nt_[A-Za-z0-9_-]+$/.test(notification)) return null;
  return { workspace, notification };
}
