import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { api } from './api';
import { ageText, registryChoice, registryHost, registryNotice, registryPref, registryUrlError, runtimeLabel, versionLabel } from './registry';

const now = new Date('2026-05-01T12:00:00Z');
const ago = (ms: number) => new Date(now.getTime() - ms).toISOString();
const MIN = 60_000;

describe('ageText', () => {
  it('says the largest whole unit, singular or plural', () => {
    const cases: [number, string][] = [
      [0, 'moments ago'],
      [59_000, 'moments ago'],
      [MIN, '1 minute ago'],
      [2 * MIN + 30_000, '2 minutes ago'],
      [59 * MIN, '59 minutes ago'],
      [60 * MIN, '1 hour ago'],
      [5 * 60 * MIN, '5 hours ago'],
      [24 * 60 * MIN, '1 day ago'],
      [9 * 24 * 60 * MIN, '9 days ago'],
    ];
    for (const [ms, want] of cases) expect(ageText(ago(ms), now), `${ms} ms`).toBe(want);
  });

  it('reads a time a little ahead (another clock) as just now, and a bad one as some time', () => {
    expect(ageText(ago(-5000), now)).toBe('moments ago');
    expect(ageText('not a time', now)).toBe('some time ago');
  });
});

describe('registryNotice', () => {
  it('says the registry is off, reachable, or unreachable with the age of what it shows', () => {
    expect(registryNotice({ url: '', offline: false }, now)).toEqual({ kind: 'off' });
    expect(registryNotice(undefined, now)).toEqual({ kind: 'off' });
    expect(registryNotice({ url: 'https://r.dev', offline: false }, now)).toEqual({ kind: 'none' });
    expect(registryNotice({ url: 'https://r.dev', offline: true, cached_at: ago(3 * 60 * MIN), error: 'the MCP registry answered 503' }, now)).toEqual({
      kind: 'offline',
      text: 'Registry unreachable — showing results cached 3 hours ago',
      error: 'the MCP registry answered 503',
    });
    expect(registryNotice({ url: 'https://r.dev', offline: true }, now)).toEqual({ kind: 'offline', text: 'Registry unreachable — nothing cached from it yet', error: '' });
  });
});

describe('labels', () => {
  it('names how a registry app runs, and its version', () => {
    expect(runtimeLabel('npm')).toBe('npm package (Node.js)');
    expect(runtimeLabel('streamable-http')).toBe('Remote server (HTTP)');
    expect(runtimeLabel('cargo')).toBe('cargo');
    expect(runtimeLabel(undefined)).toBe('');
    expect(versionLabel('1.2.0')).toBe('v1.2.0');
    expect(versionLabel('latest')).toBe('latest');
    expect(versionLabel('')).toBe('');
    expect(registryHost('https://registry.modelcontextprotocol.io')).toBe('registry.modelcontextprotocol.io');
  });
});

describe('the registry preference', () => {
  it('reads as a choice and saves back as the same preference', () => {
    const cases: [string, ReturnType<typeof registryChoice>][] = [
      ['', { choice: 'default', url: '' }],
      ['off', { choice: 'off', url: '' }],
      ['https://mcp.example.com', { choice: 'custom', url: 'https://mcp.example.com' }],
    ];
    for (const [pref, want] of cases) {
      expect(registryChoice(pref)).toEqual(want);
      expect(registryPref(want.choice, want.url)).toBe(pref);
    }
    expect(registryChoice(undefined)).toEqual({ choice: 'default', url: '' });
    expect(registryPref('custom', '  https://mcp.example.com  ')).toBe('https://mcp.example.com');
    expect(registryPref('default', 'https://ignored.example.com')).toBe('');
  });

  it('takes https, or http on this computer, the way the server does', () => {
    expect(registryUrlError('https://mcp.example.com')).toBe('');
    expect(registryUrlError('https://mcp.example.com/base/')).toBe('');
    expect(registryUrlError('http://127.0.0.1:8080')).toBe('');
    expect(registryUrlError('http://localhost:8080')).toBe('');
    expect(registryUrlError('http://mcp.example.com')).toMatch(/https:\/\//);
    expect(registryUrlError('ftp://mcp.example.com')).toMatch(/https:\/\//);
    expect(registryUrlError('mcp.example.com')).toMatch(/not a URL/);
    expect(registryUrlError('')).toMatch(/base URL/);
    expect(registryUrlError('https://me:pw@mcp.example.com')).toMatch(/password/);
    expect(registryUrlError('https://mcp.example.com/?x=1')).toMatch(/query/);
  });
});

describe('api', () => {
  let bodies: unknown[];
  beforeEach(() => {
    bodies = [];
    vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
      bodies.push({ url, method: init.method, body: JSON.parse(init.body as string) });
      return new Response(JSON.stringify({ when_closed: 'background', window: false, mcp_registry: 'off', mcp_registry_url: '' }), {
        status: 200,
        headers: { 'Content-Type': 'application/json' },
      });
    });
  });
  afterEach(() => vi.unstubAllGlobals());

  it('saves the registry choice as this computer’s preference, alone', async () => {
    const p = await api.setMcpRegistry('off');
    expect(bodies).toEqual([{ url: '/api/preferences', method: 'PUT', body: { mcp_registry: 'off' } }]);
    expect(p.mcp_registry).toBe('off');
  });
});
