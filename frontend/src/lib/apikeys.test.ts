import { describe, expect, it } from 'vitest';
import { FALLBACK_ORIGIN, KEY_ENV, keyDate, keyExport, mcpEndpoint, mcpOrigin, shownPrefix, snippets, toolSetLabel, type Snippet } from './apikeys';

describe('mcpOrigin', () => {
  it('keeps the page origin when it is http(s)', () => {
    expect(mcpOrigin('http://127.0.0.1:41234')).toBe('http://127.0.0.1:41234');
    expect(mcpOrigin('https://rerun.example')).toBe('https://rerun.example');
  });
  it('falls back to the default address in the desktop window and elsewhere', () => {
    for (const o of ['wails://wails', 'http://wails.localhost', 'http://wails.localhost:34115', 'null', '', undefined, null, 'file://', 'about:blank']) {
      expect(mcpOrigin(o)).toBe(FALLBACK_ORIGIN);
    }
    expect(FALLBACK_ORIGIN).toBe('http://127.0.0.1:7777');
  });
  it('builds the endpoint from it', () => {
    expect(mcpEndpoint('http://127.0.0.1:5000')).toBe('http://127.0.0.1:5000/api/mcp/account');
    expect(mcpEndpoint('wails://wails')).toBe('http://127.0.0.1:7777/api/mcp/account');
  });
});

/** The little TOML the Codex snippet uses: [tables] and key = "string" lines; throws on anything else. */
function parseTOML(text: string): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  let table: Record<string, string> | null = null;
  for (const line of text.split('\n')) {
    const head = /^\[([A-Za-z0-9_.-]+)\]$/.exec(line);
    const kv = /^([A-Za-z0-9_-]+) = ("(?:[^"\\]|\\.)*")$/.exec(line);
    if (head) out[head[1] ?? ''] = table = {};
    else if (kv && table) table[kv[1] ?? ''] = JSON.parse(kv[2] ?? '');
    else throw new Error(`not TOML this test knows: ${line}`);
  }
  return out;
}

describe('snippets', () => {
  const live = 'http://127.0.0.1:41234'; // the port the server says it listens on
  const endpoint = 'http://127.0.0.1:41234/api/mcp/account';
  const byId = Object.fromEntries(snippets(live).map((s) => [s.id, s])) as Record<'claude' | 'codex' | 'gemini' | 'cursor' | 'curl', Snippet>;

  it('covers every client, each pointing at the live port', () => {
    expect(Object.keys(byId)).toEqual(['claude', 'codex', 'gemini', 'cursor', 'curl']);
    for (const s of Object.values(byId)) expect(s.text).toContain(endpoint);
  });
  it('never holds the key itself, only the environment variable', () => {
    for (const s of Object.values(byId)) {
      expect(s.text).not.toContain('rrk_');
      expect(s.text).toContain(KEY_ENV);
    }
    expect(keyExport('rrk_abc')).toBe('export RERUN_KEY=rrk_abc');
    expect(keyExport()).toBe('export RERUN_KEY=rrk_…');
  });
  it('Claude Code: user scope, the variable kept unexpanded by the shell', () => {
    expect(byId.claude.text).toBe(
      `claude mcp add --scope user --transport http rerun ${endpoint} --header 'Authorization: Bearer \${RERUN_KEY}'`,
    );
    expect(byId.claude.note).toContain('--allowedTools "mcp__rerun__*"');
  });
  it('Codex: TOML with bearer_token_env_var', () => {
    expect(parseTOML(byId.codex.text)).toEqual({ 'mcp_servers.rerun': { url: endpoint, bearer_token_env_var: 'RERUN_KEY' } });
  });
  it('Gemini CLI: JSON with httpUrl and headers, and the trusted-folder note', () => {
    expect(JSON.parse(byId.gemini.text)).toEqual({
      mcpServers: { rerun: { httpUrl: endpoint, headers: { Authorization: 'Bearer $RERUN_KEY' } } },
    });
    expect(byId.gemini.note).toMatch(/trust/);
  });
  it('Cursor: JSON with ${env:RERUN_KEY}', () => {
    expect(JSON.parse(byId.cursor.text)).toEqual({
      mcpServers: { rerun: { url: endpoint, headers: { Authorization: 'Bearer ${env:RERUN_KEY}' } } },
    });
  });
  it('curl: one JSON-RPC POST whose body is JSON', () => {
    const body = /-d '([^']*)'/.exec(byId.curl.text)?.[1] ?? '';
    expect(JSON.parse(body).method).toBe('tools/call');
    expect(byId.curl.text).toContain('-H "Authorization: Bearer $RERUN_KEY"');
  });
  it('falls back to the default address in the desktop window', () => {
    for (const s of snippets('wails://wails')) expect(s.text).toContain('http://127.0.0.1:7777/api/mcp/account');
  });
  it('labels the tool set', () => {
    expect(toolSetLabel('compact')).toMatch(/28/);
    expect(toolSetLabel('full')).toMatch(/45/);
  });
});

describe('shownPrefix and keyDate', () => {
  it('marks the prefix as partial', () => {
    expect(shownPrefix('rrk_ab12cd')).toBe('rrk_ab12cd…');
  });
  it('says never for no date, today/yesterday when recent, else a date', () => {
    const now = new Date(2025, 2, 10, 15, 0);
    expect(keyDate(null)).toBe('never');
    expect(keyDate(null, '—')).toBe('—');
    expect(keyDate('garbage')).toBe('never');
    expect(keyDate(new Date(2025, 2, 10, 9, 5).toISOString(), 'never', now)).toMatch(/^today /);
    expect(keyDate(new Date(2025, 2, 9, 23, 5).toISOString(), 'never', now)).toMatch(/^yesterday /);
    expect(keyDate(new Date(2025, 2, 3, 9, 5).toISOString(), 'never', now)).toMatch(/2025/);
  });
});
