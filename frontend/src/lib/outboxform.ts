// Settings → Notifications → Email and Hooks (pure): the forms' defaults,
// what the person typed checked before it is sent (the server checks again
// and has the last word), and how a delivery reads in the panel.
import type { NotificationKind } from './notificationtypes';

/** Settings → Notifications → Email; host "" is off. password names a variable: "${SMTP_PASSWORD}". */
export type EmailSettings = {
  host: string;
  port: number;
  tls: 'starttls' | 'tls' | 'none';
  user: string;
  password: string;
  from: string;
  to: string;
};

export type HookFlavour = 'slack' | 'discord' | 'ntfy' | 'json';

/** An outgoing notification hook; url may hold ${NAME} references, secret (json) names a variable. */
export type NotificationHook = {
  id: string;
  name: string;
  flavour: HookFlavour;
  url: string;
  secret: string;
  kinds: NotificationKind[] | null;
};

/** A test button's outcome: the server's own answer when it refused. */
export type SendTest = { ok: boolean; answer: string };

/** One mail or hook POST of a notification. */
export type OutboxDelivery = {
  id: string;
  notification_id: string;
  channel: 'email' | 'hook' | 'phone';
  target: string;
  target_name: string;
  status: 'pending' | 'sending' | 'sent' | 'failed';
  attempts: number;
  last_error: string;
  next_at: string | null;
  created_at: string;
  sent_at: string | null;
};

export const TLS_MODES: { id: EmailSettings['tls']; label: string; port: number }[] = [
  { id: 'starttls', label: 'STARTTLS', port: 587 },
  { id: 'tls', label: 'Implicit TLS', port: 465 },
  { id: 'none', label: 'None (this computer only)', port: 25 },
];

export const FLAVOURS: { id: HookFlavour; label: string; placeholder: string }[] = [
  { id: 'slack', label: 'Slack', placeholder: 'https://hooks.slack.com/services/${SLACK_HOOK}' },
  { id: 'discord', label: 'Discord', placeholder: 'https://discord.com/api/webhooks/${DISCORD_HOOK}' },
  { id: 'ntfy', label: 'ntfy', placeholder: 'https://ntfy.sh/your-topic' },
  { id: 'json', label: 'JSON (signed)', placeholder: 'https://example.com/rerun-notifications' },
];

export const emptyEmail = (): EmailSettings => ({ host: '', port: 587, tls: 'starttls', user: '', password: '', from: '', to: '' });

export const newHook = (flavour: HookFlavour = 'slack'): NotificationHook => ({ id: '', name: '', flavour, url: '', secret: '', kinds: null });

const REFERENCE = /^\$\{[A-Za-z_][A-Za-z0-9_]*\}$/;
const ADDRESS = /^[^\s@<>,]+@[^\s@<>,]+$/;

export const isLocalHost = (host: string) => /^(localhost|127(\.\d{1,3}){3}|::1|\[::1\])$/i.test(host.trim());

/** The port that goes with a TLS mode when the person switches modes and kept the previous default. */
export function portFor(e: EmailSettings, tls: EmailSettings['tls']): number {
  const wasDefault = TLS_MODES.some((m) => m.port === e.port) || !e.port;
  return wasDefault ? TLS_MODES.find((m) => m.id === tls)!.port : e.port;
}

/** Strips the display name: "Rerun <a@b.c>" → "a@b.c". */
const bare = (a: string) => a.trim().replace(/^.*<([^>]*)>$/, '$1').trim();

/** What to fix before saving email settings, or '' when they look right. Host '' turns email off. */
export function emailProblem(e: EmailSettings): string {
  const host = e.host.trim();
  if (!host) return '';
  if (/[\s/:@]/.test(host) && !host.includes('::')) return 'The SMTP host is a name like smtp.example.com: no scheme, port or path.';
  if (!Number.isInteger(e.port) || e.port < 1 || e.port > 65535) return 'The port is a number from 1 to 65535 (587 for STARTTLS, 465 for implicit TLS).';
  if (e.tls === 'none' && !isLocalHost(host)) return 'Without TLS the password and the mail travel in the clear: only for a server on this computer (127.0.0.1 or localhost).';
  const pw = e.password.trim();
  if (pw && !REFERENCE.test(pw)) return 'Write the password as a workspace variable, e.g. ${SMTP_PASSWORD} (add it in Settings → Variables), never the password itself.';
  if (pw && !e.user.trim()) return 'A password needs a user name.';
  if (!ADDRESS.test(bare(e.from))) return 'The from address is an email address, e.g. Rerun <rerun@example.com>.';
  const to = e.to.split(',').map((a) => a.trim()).filter(Boolean);
  if (to.length === 0 || !to.every((a) => ADDRESS.test(bare(a)))) return 'The to address is an email address, or several separated by commas.';
  return '';
}

/** What to fix in a hook, or ''. */
export function hookProblem(h: NotificationHook): string {
  const url = h.url.trim();
  let u: URL;
  try {
    u = new URL(url.replace(/\$\{[A-Za-z_][A-Za-z0-9_]*\}/g, 'x'));
  } catch {
    return 'The URL is a full address starting with https://.';
  }
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && isLocalHost(u.hostname))) return 'The URL must use https (plain http only for this computer).';
  if (u.username || u.password) return 'Put a password in a workspace variable and write ${NAME} in the URL instead.';
  const secret = h.secret.trim();
  if (h.flavour === 'json' && !REFERENCE.test(secret)) return 'A JSON hook is signed: name the variable holding its signing secret, e.g. ${HOOK_SECRET}.';
  if (h.flavour !== 'json' && secret) return 'Only JSON hooks take a signing secret.';
  return '';
}

/** Whether two email settings are the same form. */
export const sameEmail = (a: EmailSettings | null, b: EmailSettings | null) => JSON.stringify(a) === JSON.stringify(b);

/** One line for a delivery that has a problem: where it went, what the other side answered, what happens next. */
export function deliveryLine(d: OutboxDelivery, now = Date.now()): string {
  const where = d.channel === 'email' ? 'Email' : `Hook ${d.target_name}`;
  const answer = d.last_error || 'no answer';
  if (d.status === 'failed') return `${where} not sent after ${d.attempts} attempt${d.attempts === 1 ? '' : 's'}: ${answer}`;
  if (d.status === 'pending' && d.next_at) {
    const s = Math.max(0, Math.round((Date.parse(d.next_at) - now) / 1000));
    const when = s < 60 ? `${s}s` : s < 3600 ? `${Math.round(s / 60)} min` : `${Math.round(s / 3600)} h`;
    return `${where} failed (${answer}); retrying in ${when}`;
  }
  return `${where}: ${d.status}`;
}
