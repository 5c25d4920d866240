import { describe, expect, it } from 'vitest';
import { claudeCommand, cursorConfig, FALLBACK_ORIGIN, keyDate, mcpEndpoint, mcpOrigin, shownPrefix } from './apikeys';

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

describe('claudeCommand', () => {
  it('has a placeholder until a key is known', () => {
    expect(claudeCommand('wails://wails')).toBe(
      'claude mcp add --transport http rerun http://127.0.0.1:7777/api/mcp/account --header "Authorization: Bearer rrk_…"',
    );
  });
  it('puts the real key in', () => {
    expect(claudeCommand('http://127.0.0.1:9000', 'rrk_abc123')).toBe(
      'claude mcp add --transport http rerun http://127.0.0.1:9000/api/mcp/account --header "Authorization: Bearer rrk_abc123"',
    );
    expect(claudeCommand('http://127.0.0.1:9000', '   ')).toContain('Bearer rrk_…"');
  });
});

describe('cursorConfig', () => {
  it('is valid JSON with the endpoint and the key', () => {
    const parsed = JSON.parse(cursorConfig('http://127.0.0.1:9000', 'rrk_abc123'));
    expect(parsed).toEqual({
      mcpServers: { rerun: { url: 'http://127.0.0.1:9000/api/mcp/account', headers: { Authorization: 'Bearer rrk_abc123' } } },
    });
  });
  it('stays valid JSON with the placeholder and the fallback origin', () => {
    const parsed = JSON.parse(cursorConfig('wails://wails'));
    expect(parsed.mcpServers.rerun.url).toBe('http://127.0.0.1:7777/api/mcp/account');
    expect(parsed.mcpServers.rerun.headers.Authorization).toBe('Bearer rrk_…');
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
