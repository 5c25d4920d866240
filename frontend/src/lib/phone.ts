// Settings → Phone: the phones paired with a workspace through its relay,
// and the one-time pairing link (with its QR code) a phone scans.

/** A paired phone, as the relay lists it. */
export type Phone = {
  id: string;
  name: string;
  paired_at: string;
  last_push_at?: string;
  last_error?: string; // the phone's push service's last refusal
};

/** A pairing link: shown once, works once, until expires_at. */
export type PhoneInvite = { link: string; qr: string; expires_at: string };

/** How long a pairing link still works, as "9:41", or "" once it expired. */
export function timeLeft(expiresAt: string, now: number = Date.now()): string {
  const ms = Date.parse(expiresAt) - now;
  if (!(ms > 0)) return '';
  const s = Math.ceil(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** The phones in after that were not in before: the one just paired. */
export function newlyPaired(before: Phone[], after: Phone[]): Phone[] {
  const known = new Set(before.map((p) => p.id));
  return after.filter((p) => !known.has(p.id));
}

/** One line about a phone for the list. */
export function phoneLine(p: Phone, now: number = Date.now()): string {
  const parts = [`paired ${ago(p.paired_at, now)}`];
  if (p.last_push_at) parts.push(`last notification ${ago(p.last_push_at, now)}`);
  return parts.join(' · ');
}

function ago(iso: string, now: number): string {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}
