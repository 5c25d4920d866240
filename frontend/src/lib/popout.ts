// The Desktop popped out into a window of its own: the page's address
// fragment that says which agent's Desktop it shows, and the size to open
// that window at (pure).
import type { Size } from './screen';

/** Which Desktop a page shows alone: its workspace and agent. */
export type DesktopRef = { workspace: string; agent: string };

/** The fragment of the page showing only that agent's Desktop (backend/httpapi desktopHash). */
export function desktopHash(workspace: string, agent: string): string {
  return `#desktop=${encodeURIComponent(workspace)}/${encodeURIComponent(agent)}`;
}

/** The Desktop a location's fragment names (`#desktop=<workspace>/<agent>`), else null. */
export function parseDesktopHash(hash: string): DesktopRef | null {
  const m = /^#desktop=([^/]+)\/([^/]+)$/.exec(hash);
  if (!m) return null;
  try {
    const workspace = decodeURIComponent(m[1]!).trim();
    const agent = decodeURIComponent(m[2]!).trim();
    return workspace && agent ? { workspace, agent } : null;
  } catch {
    return null; // a broken %-escape
  }
}

/** The popped-out page's address on this server: the same page, no query (the cookie signs it in), the fragment. */
export function popOutUrl(page: { origin: string; pathname: string }, workspace: string, agent: string): string {
  return page.origin + page.pathname + desktopHash(workspace, agent);
}

/** Room the popped-out window gives around the page: its header (the address bar) and the margin. */
export const POP_CHROME = { width: 2 * 12, height: 49 + 2 * 12 };

/**
 * The window.open features for the popped-out Desktop: room for the page at
 * its real size plus the header, no larger than the screen (it then scales
 * the page down to fit), no smaller than a usable window.
 */
export function popupFeatures(frame: Size, avail: Size): string {
  const clamp = (v: number, lo: number, hi: number) => Math.round(Math.max(lo, Math.min(hi, v)));
  const width = clamp(frame.width + POP_CHROME.width, 480, avail.width > 0 ? avail.width : Infinity);
  const height = clamp(frame.height + POP_CHROME.height, 360, avail.height > 0 ? avail.height : Infinity);
  return `popup,width=${width},height=${height}`;
}

/** The popped-out window's title: whose Desktop it is. */
export function popOutTitle(agentName: string): string {
  return `${agentName} — Desktop — Rerun`;
}
