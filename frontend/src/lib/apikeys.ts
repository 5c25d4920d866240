// Settings → API keys: what to paste into Claude Code or Cursor (pure).

/** Where `rerun` listens when the page does not say (the desktop window is wails://…). */
export const FALLBACK_ORIGIN = 'http://127.0.0.1:7777';

/** Stands in for a key the page does not know (it is shown once, at creation). */
export const KEY_PLACEHOLDER = 'rrk_…';

/** The origin an outside app reaches this Rerun at: the page's own when it is http(s), else the default. */
export function mcpOrigin(origin: string | null | undefined): string {
  if (!origin || !/^https?:\/\/[^/]+$/i.test(origin)) return FALLBACK_ORIGIN;
  let host: string;
  try {
    host = new URL(origin).hostname;
  } catch {
    return FALLBACK_ORIGIN;
  }
  // Wails serves its window from a made-up host on some platforms.
  if (host === 'wails' || host === 'wails.localhost') return FALLBACK_ORIGIN;
  return origin.replace(/\/+$/, '');
}

/** The MCP endpoint's URL. */
export function mcpEndpoint(origin: string | null | undefined): string {
  return `${mcpOrigin(origin)}/api/mcp/account`;
}

const bearer = (key?: string) => `Bearer ${key?.trim() || KEY_PLACEHOLDER}`;

/** The one line that adds Rerun to Claude Code. */
export function claudeCommand(origin: string | null | undefined, key?: string): string {
  return `claude mcp add --transport http rerun ${mcpEndpoint(origin)} --header "Authorization: ${bearer(key)}"`;
}

/** Cursor's ~/.cursor/mcp.json with Rerun in it (valid JSON, the headers kept on one line). */
export function cursorConfig(origin: string | null | undefined, key?: string): string {
  const q = JSON.stringify;
  return [
    '{',
    '  "mcpServers": {',
    '    "rerun": {',
    `      "url": ${q(mcpEndpoint(origin))},`,
    `      "headers": { "Authorization": ${q(bearer(key))} }`,
    '    }',
    '  }',
    '}',
  ].join('\n');
}

/** "rrk_ab12cd…": the part of a key Rerun keeps, so a person can tell keys apart. */
export function shownPrefix(prefix: string): string {
  return `${prefix}…`;
}

/** "today 14:05", "yesterday 09:10" or "3 Mar 2025"; `never` for no date. */
export function keyDate(iso: string | null, never = 'never', now = new Date()): string {
  if (!iso) return never;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return never;
  const time = d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  if (d.toDateString() === now.toDateString()) return `today ${time}`;
  const y = new Date(now);
  y.setDate(now.getDate() - 1);
  if (d.toDateString() === y.toDateString()) return `yesterday ${time}`;
  return d.toLocaleDateString([], { day: 'numeric', month: 'short', year: 'numeric' });
}
