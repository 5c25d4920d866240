// About Rerun: the build's facts (GET /api/info) and what "Check for
// updates" found (GET /api/update), turned into what the dialog says.

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
