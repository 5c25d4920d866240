// The relay link as the UI shows it: types of the relay routes, the link
// form's checks, and the words of the workspace pill's sync status.

/** GET /api/workspaces/{ws}/relay. No secret is ever in it. */
export type RelayStatus = {
  linked: boolean;
  relay_url?: string;
  relay_workspace_id?: string;
  /** + token = a trigger's public URL. */
  hook_base?: string;
  connected: boolean;
  since?: string;
  last_delivery?: string;
  delivered: number;
  last_error?: string;
  /** This device. */
  device_id?: string;
  /** This device takes the webhooks and fires the schedules. */
  automations_device: boolean;
  /** The device that does. */
  automations_device_id?: string;
  devices?: Device[];
  linked_at?: string;
  sync?: { enabled: boolean; pending: number; parked?: number; last_sync?: string; last_error?: string };
};

/** One device of a synced workspace. */
export type Device = { id: string; name?: string; this: boolean; automations: boolean };

/** "laptop (this device)", "studio-mac", "Device …k3f9" for one without a name. */
export function deviceLabel(d: Device): string {
  const name = d.name?.trim() || `Device …${d.id.slice(-4)}`;
  return d.this ? `${name} (this device)` : name;
}

/** A delivery the relay gave up on. */
export type DeadLetter = {
  id: string;
  token_hash: string;
  received_at: string;
  method: string;
  size: number;
  attempts: number;
  last_error: string;
  dead_at: string;
};

/** The body of POST …/relay. */
export type RelayLinkRequest =
  | { relay_url: string; signup_token: string }
  | { relay_url: string; workspace_id: string; secret: string };

export type LinkForm = { mode: 'signup' | 'operator'; url: string; token: string; workspaceId: string; secret: string };

/** Checks the link form: the request to send, or what to fix. */
export function linkRequest(f: LinkForm): { body: RelayLinkRequest } | { error: string } {
  const url = f.url.trim().replace(/\/+$/, '');
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { error: 'Enter the relay’s address, like https://relay.example.com.' };
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return { error: 'The relay’s address starts with https://.' };
  const local = ['localhost', '127.0.0.1', '[::1]'].includes(u.hostname);
  if (u.protocol === 'http:' && !local) return { error: 'Use https:// — plain http only reaches a relay on this computer.' };
  if (f.mode === 'signup') {
    const token = f.token.trim();
    if (!token) return { error: 'Enter the signup token the relay’s operator gave you.' };
    return { body: { relay_url: url, signup_token: token } };
  }
  const id = f.workspaceId.trim();
  const secret = f.secret.trim();
  if (!id || !secret) return { error: 'Enter the workspace id and the secret that rerun-relay -new-workspace printed.' };
  return { body: { relay_url: url, workspace_id: id, secret } };
}

/** "just now", "3 min ago", "2 h ago", "5 d ago"; '' for no time. */
export function ago(iso: string | undefined | null, now = new Date()): string {
  if (!iso) return '';
  const s = Math.max(0, Math.round((now.getTime() - new Date(iso).getTime()) / 1000));
  if (s < 45) return 'just now';
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}

export type SyncBadge = { tone: 'ok' | 'warn' | 'off'; text: string; title: string };

/** What the workspace pill shows of the link; null when not linked. */
export function syncBadge(s: RelayStatus | null | undefined, now = new Date()): SyncBadge | null {
  if (!s?.linked) return null;
  if (!s.connected) {
    return { tone: 'off', text: 'Offline', title: s.last_error ? `Relay offline: ${s.last_error}` : 'Not connected to the relay' };
  }
  const pending = s.sync?.pending ?? 0;
  if (s.sync?.last_error) return { tone: 'warn', text: pending > 0 ? `Pending ${pending}` : 'Sync failing', title: `Sync: ${s.sync.last_error}` };
  if (pending > 0) return { tone: 'warn', text: `Pending ${pending}`, title: `${pending} changes not synced yet` };
  if (s.sync?.last_sync) return { tone: 'ok', text: `Synced ${ago(s.sync.last_sync, now)}`, title: `Connected to ${s.relay_url}` };
  return { tone: 'ok', text: 'Connected', title: `Connected to ${s.relay_url}` };
}

/** A dead letter's size, for the list. */
export function sizeLabel(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1 << 20) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1 << 20)).toFixed(1)} MiB`;
}
