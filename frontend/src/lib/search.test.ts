import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError, api } from './api';
import {
  appendPage,
  dayBound,
  escapeHtml,
  formatBytes,
  highlight,
  highlightHtml,
  hitLabel,
  nextPage,
  retentionProblems,
  searchParams,
  searchProblem,
  type SearchHit,
} from './search';

const hit = (n: number, extra: Partial<SearchHit> = {}): SearchHit => ({ n, kind: 'step', agent_id: 'ag_1', run_id: 'rn_1', seq: n, at: '2026-12-01T10:00:00Z', snippet: 's', ...extra });

describe('searchParams', () => {
  it('sends the trimmed text and only the filters set', () => {
    expect(searchParams({ q: '  invoice ', agent: '', source: '', status: '' })).toBe('?q=invoice');
    const p = new URLSearchParams(searchParams({ q: 'a b', agent: 'ag_1', source: 'chat', status: 'failed', before: 42, limit: 20 }));
    expect(Object.fromEntries(p)).toEqual({ q: 'a b', agent: 'ag_1', source: 'chat', status: 'failed', before: '42', limit: '20' });
  });

  it('turns days into the start of since and the end of until, in local time', () => {
    const p = new URLSearchParams(searchParams({ q: 'x', since: '2026-12-01', until: '2026-12-01' }));
    expect(p.get('since')).toBe(new Date(2026, 11, 1).toISOString());
    expect(p.get('until')).toBe(new Date(2026, 11, 1, 23, 59, 59, 999).toISOString());
  });

  it('passes RFC 3339 times as they are and leaves before 0 out', () => {
    expect(dayBound('2026-12-01T10:00:00Z', true)).toBe('2026-12-01T10:00:00Z');
    expect(searchParams({ q: 'x', before: 0 })).toBe('?q=x');
  });

  it('says when the from day is after the to day', () => {
    expect(searchProblem({ q: 'x', since: '2026-12-02', until: '2026-12-01' })).toMatch(/after/);
    expect(searchProblem({ q: 'x', since: '2026-12-01', until: '2026-12-01' })).toBe('');
  });
});

describe('paging', () => {
  it('asks for the page before the last hit while the server says more', () => {
    const q = { q: 'x', agent: 'ag_1' };
    expect(nextPage(q, { hits: [hit(9), hit(7)], terms: [], more: true })).toEqual({ q: 'x', agent: 'ag_1', before: 7 });
    expect(nextPage(q, { hits: [hit(9)], terms: [], more: false })).toBeNull();
    expect(nextPage(q, { hits: [], terms: [], more: true })).toBeNull();
  });

  it('appends a page without repeating hits already shown', () => {
    expect(appendPage([hit(9), hit(7)], [hit(7), hit(5)]).map((h) => h.n)).toEqual([9, 7, 5]);
  });
});

describe('highlight', () => {
  it('marks every term, case-insensitively, longest first', () => {
    expect(highlight('Invoice sent; invoices paid', ['invoice', 'invoices'])).toEqual([
      { text: 'Invoice', mark: true },
      { text: ' sent; ', mark: false },
      { text: 'invoices', mark: true },
      { text: ' paid', mark: false },
    ]);
  });

  it('escapes HTML in the snippet and treats terms as text, not patterns', () => {
    expect(highlightHtml('<img src=x onerror=alert(1)> a.b', ['a.b', '<img'])).toBe('<mark>&lt;img</mark> src=x onerror=alert(1)&gt; <mark>a.b</mark>');
    expect(highlightHtml('a+b axb', ['a+b'])).toBe('<mark>a+b</mark> axb');
    expect(escapeHtml(`"&'`)).toBe('&quot;&amp;&#39;');
  });

  it('gives the snippet as one plain part when no term is given', () => {
    expect(highlight('plain', [])).toEqual([{ text: 'plain', mark: false }]);
    expect(highlight('plain', ['  '])).toEqual([{ text: 'plain', mark: false }]);
    expect(highlight('', ['x'])).toEqual([]);
  });
});

describe('formatting and validation', () => {
  it('formats bytes', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(812)).toBe('812 B');
    expect(formatBytes(4300)).toBe('4.2 KB');
    expect(formatBytes(250 * 1024 * 1024)).toBe('250 MB');
    expect(formatBytes(1.3 * 1024 ** 3)).toBe('1.3 GB');
  });

  it('names what is wrong with a retention policy', () => {
    expect(retentionProblems({ keep_days: 90, trim_days: 0, trim_chars: 4096 })).toEqual({});
    const bad = retentionProblems({ keep_days: -1, trim_days: 1.5, trim_chars: 100 });
    expect(Object.keys(bad).sort()).toEqual(['keep_days', 'trim_chars', 'trim_days']);
    expect(retentionProblems({ keep_days: 0, trim_days: 0, trim_chars: 65537 }).trim_chars).toMatch(/65536/);
  });

  it('labels a hit by kind, step and where it ran', () => {
    expect(hitLabel(hit(3, { source: 'chat', status: 'done' }))).toBe('Step 3 · chat · done');
    expect(hitLabel(hit(3, { kind: 'notification', seq: undefined }))).toBe('Notification');
  });
});

describe('api', () => {
  let urls: { url: string; init: RequestInit }[];
  let answer: () => Response;
  beforeEach(() => {
    urls = [];
    vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
      urls.push({ url, init });
      return answer();
    });
  });
  afterEach(() => vi.unstubAllGlobals());
  const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status });

  it('searches the workspace with the query string', async () => {
    answer = () => json(200, { hits: [hit(1)], terms: ['x'], more: false });
    const r = await api.search('ws 1', { q: 'x', agent: 'ag_1', before: 5 });
    expect(r.terms).toEqual(['x']);
    expect(urls[0]!.url).toBe('/api/workspaces/ws%201/search?q=x&agent=ag_1&before=5');
  });

  it('gives a 400 answer as an ApiError with the server message', async () => {
    answer = () => json(400, { error: 'unknown status "nope"' });
    await expect(api.search('ws_1', { q: 'x' })).rejects.toEqual(new ApiError(400, 'unknown status "nope"'));
  });

  it('pins a run, reads and saves retention, and reads disk use', async () => {
    answer = () => json(200, { pinned: true });
    await expect(api.pinRun('ws_1', 'rn_1', true)).resolves.toEqual({ pinned: true });
    expect(urls[0]!.url).toBe('/api/workspaces/ws_1/runs/rn_1/pin');
    expect(urls[0]!.init.method).toBe('PUT');
    expect(JSON.parse(urls[0]!.init.body as string)).toEqual({ pinned: true });

    const r = { keep_days: 30, trim_days: 7, trim_chars: 2048 };
    answer = () => json(200, r);
    await api.setRetention('ws_1', r);
    expect(urls[1]!.url).toBe('/api/workspaces/ws_1/retention');
    expect(urls[1]!.init.method).toBe('PUT');
    expect(JSON.parse(urls[1]!.init.body as string)).toEqual(r);

    answer = () => json(200, { agents: [], database: 1, free: 2, shared: 3, shared_db: 4, total: 10 });
    await expect(api.diskUsage('ws_1')).resolves.toMatchObject({ total: 10 });
    expect(urls[2]!.url).toBe('/api/workspaces/ws_1/disk');
  });
});
