// About Rerun: the build's facts (GET /api/info) and what "Check for
// updates" found (GET /api/update), or the last check, daily or clicked
// (GET /api/update/last), turned into what the dialog and the top bar say.
import { ageText } from './registry';

/** GET /api/info. */
export interface AppInfo {
  version: string;
  commit: string;
  build_date: string;
  data_dir: string;
  local_url: string;
  mcp_url: string;
  /** "native" in the desktop window: POST /api/ui/pick-folder shows the system's folder dialog. */
  folder_picker?: string;
}

/** GET /api/update: the verified release feed against this build. */
export interface UpdateStatus {
  current: string;
  latest: string;
  available: boolean;
  url?: string;
  sha256?: string;
  notes?: string;
}

/** GET /api/update/last: what the last check found, read without the network. */
export interface LastUpdate extends Partial<UpdateStatus> {
  /** When it ended; absent when nothing was checked yet. */
  checked_at?: string;
  /** Why it failed; a failed check never says a release is available. */
  error?: string;
  /** How Rerun checks: daily, only when asked, or not at all (`off` says why). */
  checks: 'daily' | 'manual' | 'off';
  off?: string;
}

export const REPO_URL = 'https://github.com/rerun-build/rerun-desktop';
export const DOCS_URL = `${REPO_URL}#readme`;
export const LICENSE_URL = `${REPO_URL}/blob/main/build/linux/copyright`;
export const RELEASES_URL = `${REPO_URL}/releases`;

/** The build date as a person reads it, in UTC; the raw text when it is no date (a dev build says "unknown"). */
export function buildDate(iso: string): string {
  const d = new Date(iso);
  if (!iso || Number.isNaN(d.getTime())) return iso || 'unknown';
  return d.toLocaleString('en-GB', { timeZone: 'UTC', dateStyle: 'medium', timeStyle: 'short' }) + ' UTC';
}

/** The one line the dialog shows after a check. */
export function updateLine(st: UpdateStatus): string {
  if (st.available) return `Rerun ${st.latest} is available (you have ${st.current}).`;
  return `Rerun ${st.current} is up to date (the newest release is ${st.latest}).`;
}

/** An update package downloaded and verified against the release key. */
export interface DownloadedUpdate {
  version: string;
  path: string;
  sha256: string;
  size: number;
}

/** The line once a package is downloaded and verified. */
export function downloadedLine(d: DownloadedUpdate): string {
  const name = d.path.split(/[\\/]/).pop() ?? d.path;
  const mb = d.size / (1024 * 1024);
  const size = mb >= 10 ? `${Math.round(mb)} MB` : `${mb.toFixed(1)} MB`;
  return `Downloaded ${name} (${size}); its signature checks out.`;
}

/** The line for a check that failed: the server says why (offline, a bad signature, checks off). */
export function updateFailure(message: string): string {
  const m = message.trim();
  if (!m) return 'Could not check for updates.';
  return m.charAt(0).toUpperCase() + m.slice(1) + (/[.!?]$/.test(m) ? '' : '.');
}

/**
 * The top bar's pill while the last check found a newer release (null
 * otherwise): "Rerun v1.5.0 is available", or "v1.5.0 available" where the
 * bar is short of room (the default 1280-pixel window).
 */
export function updatePill(last: LastUpdate | null | undefined): { long: string; short: string } | null {
  if (!last?.available || last.error || !last.latest) return null;
  return { long: `Rerun ${last.latest} is available`, short: `${last.latest} available` };
}

/** The last check as About Rerun shows it: the release it found, once a check ended well. */
export function lastStatus(last: LastUpdate | null | undefined): UpdateStatus | null {
  if (!last?.checked_at || last.error || !last.latest || !last.current) return null;
  return { ...last, current: last.current, latest: last.latest, available: !!last.available };
}

/** When the last check was, and how Rerun checks: "Checked 2 hours ago. Rerun checks once a day." */
export function lastCheckLine(last: LastUpdate | null | undefined, now: Date = new Date()): string {
  if (!last || last.checks === 'off') return '';
  const how = last.checks === 'daily' ? 'Rerun checks once a day.' : 'Rerun checks only when you ask.';
  if (!last.checked_at) return how;
  const when = ageText(last.checked_at, now);
  return `${last.error ? `The last check failed ${when}` : `Checked ${when}`}. ${how}`;
}
