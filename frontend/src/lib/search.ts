// Workspace search over runs' steps and notifications, the retention policy
// and disk use: the shapes the server answers and the pure helpers the
// search box, the palette and Settings → History & disk share.

export const SEARCH_SOURCES = ['chat', 'api', 'agent', 'schedule', 'trigger'] as const;
export const SEARCH_STATUSES = ['queued', 'running', 'paused', 'done', 'failed', 'cancelled'] as const;
export type SearchSource = (typeof SEARCH_SOURCES)[number];
export type SearchStatus = (typeof SEARCH_STATUSES)[number];

export type SearchHit = {
  /** The hit's place in the whole answer: the next page asks before the last one's. */
  n: number;
  kind: 'step' | 'notification' | (string & {});
  agent_id: string;
  run_id?: string;
  seq?: number;
  notification_id?: string;
  source?: string;
  status?: string;
  at: string;
  snippet: string;
};

export type SearchResult = { hits: SearchHit[]; terms: string[]; more: boolean };

export type SearchQuery = {
  q: string;
  agent?: string;
  source?: SearchSource | '';
  status?: SearchStatus | '';
  /** A day (YYYY-MM-DD) or RFC 3339 time; a bare day means from its start. */
  since?: string;
  /** A day (YYYY-MM-DD) or RFC 3339 time; a bare day means through its end. */
  until?: string;
  before?: number;
  limit?: number;
};

export type Retention = { keep_days: number; trim_days: number; trim_chars: number };

export type AgentDisk = {
  agent_id: string;
  handle: string;
  name: string;
  files: number;
  database: number;
  browser: number;
  runs: number;
  run_count: number;
  total: number;
};

export type DiskUsage = { agents: AgentDisk[]; database: number; free: number; shared: number; shared_db: number; total: number };

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** A date input's day as an RFC 3339 instant in local time: the day's start, or its end for `until`. */
export function dayBound(day: string, end: boolean): string {
  if (!DAY.test(day)) return day;
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  const t = end ? new Date(y, m - 1, d + 1, 0, 0, 0, -1) : new Date(y, m - 1, d);
  return t.toISOString();
}

/** The search's query string ("?q=…&agent=…"), leaving unset filters out. */
export function searchParams(q: SearchQuery): string {
  const p = new URLSearchParams();
  p.set('q', q.q.trim());
  if (q.agent) p.set('agent', q.agent);
  if (q.source) p.set('source', q.source);
  if (q.status) p.set('status', q.status);
  if (q.since) p.set('since', dayBound(q.since, false));
  if (q.until) p.set('until', dayBound(q.until, true));
  if (q.before !== undefined && q.before > 0) p.set('before', String(q.before));
  if (q.limit) p.set('limit', String(q.limit));
  return `?${p}`;
}

/** What a filter form says is wrong ('' when nothing). */
export function searchProblem(q: SearchQuery): string {
  if (q.since && q.until && dayBound(q.since, false) > dayBound(q.until, true)) return 'The “from” day is after the “to” day.';
  return '';
}

/** The query of the page after `result` (null when there is none). */
export function nextPage(q: SearchQuery, result: SearchResult): SearchQuery | null {
  const last = result.hits[result.hits.length - 1];
  if (!result.more || !last) return null;
  return { ...q, before: last.n };
}

/** Adds a page of hits to those shown, dropping any already there (a hit is its n). */
export function appendPage(shown: SearchHit[], page: SearchHit[]): SearchHit[] {
  const seen = new Set(shown.map((h) => h.n));
  return [...shown, ...page.filter((h) => !seen.has(h.n))];
}

export type Segment = { text: string; mark: boolean };

/**
 * The snippet cut into plain and matched parts by the search's terms (case
 * insensitive, longest term first). Components render each part as text, so
 * nothing in a snippet is ever taken as HTML.
 */
export function highlight(snippet: string, terms: string[]): Segment[] {
  const words = [...new Set(terms.map((t) => t.trim()).filter(Boolean))].sort((a, b) => b.length - a.length);
  if (words.length === 0 || snippet === '') return snippet ? [{ text: snippet, mark: false }] : [];
  const re = new RegExp(words.map(escapeRegExp).join('|'), 'giu');
  const out: Segment[] = [];
  let at = 0;
  for (const m of snippet.matchAll(re)) {
    if (m[0] === '') continue;
    if (m.index > at) out.push({ text: snippet.slice(at, m.index), mark: false });
    out.push({ text: m[0], mark: true });
    at = m.index + m[0].length;
  }
  if (at < snippet.length) out.push({ text: snippet.slice(at), mark: false });
  return out;
}

/** The snippet as HTML with <mark> around the terms, everything else escaped. */
export function highlightHtml(snippet: string, terms: string[]): string {
  return highlight(snippet, terms)
    .map((s) => (s.mark ? `<mark>${escapeHtml(s.text)}</mark>` : escapeHtml(s.text)))
    .join('');
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Bytes for a person: "0 B", "812 B", "4.2 KB", "1.3 GB". */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n) || n <= 0) return '0 B';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${Math.round(v)} B` : `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

export const TRIM_CHARS_MIN = 256;
export const TRIM_CHARS_MAX = 65536;

/** What is wrong with a retention policy, by field ({} when nothing). */
export function retentionProblems(r: Retention): Partial<Record<keyof Retention, string>> {
  const out: Partial<Record<keyof Retention, string>> = {};
  const whole = (n: number) => Number.isInteger(n) && n >= 0;
  if (!whole(r.keep_days)) out.keep_days = 'Days to keep must be a whole number, 0 or more.';
  if (!whole(r.trim_days)) out.trim_days = 'Days before trimming must be a whole number, 0 or more.';
  if (!Number.isInteger(r.trim_chars) || r.trim_chars < TRIM_CHARS_MIN || r.trim_chars > TRIM_CHARS_MAX)
    out.trim_chars = `Keep between ${TRIM_CHARS_MIN} and ${TRIM_CHARS_MAX} characters of a trimmed output.`;
  return out;
}

/** A hit's one-line label: what kind of thing it found, and where. */
export function hitLabel(h: SearchHit): string {
  if (h.kind === 'notification') return 'Notification';
  const where = [h.source, h.status].filter(Boolean).join(' · ');
  return h.seq !== undefined ? `Step ${h.seq}${where ? ' · ' + where : ''}` : where || h.kind;
}
