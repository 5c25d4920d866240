import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { api } from './api';
import { WHEN_CLOSED_CHOICES, autostartHint } from './autostart';

let calls: { url: string; init: RequestInit }[];
beforeEach(() => {
  calls = [];
  vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
    calls.push({ url, init });
    return new Response(JSON.stringify({ enabled: true, available: true, path: '/home/me/.config/autostart/rerun.desktop' }), {
      status: 200,
      headers: { 'Content-Type': 'application/json' },
    });
  });
});
afterEach(() => vi.unstubAllGlobals());

describe('start at login', () => {
  it('reads and sets the entry of this computer, not of a workspace', async () => {
    await api.getAutostart();
    expect(calls[0]!.url).toBe('/api/autostart');
    expect(calls[0]!.init.method).toBe('GET');
    const st = await api.setAutostart(true);
    expect(calls[1]!.url).toBe('/api/autostart');
    expect(calls[1]!.init.method).toBe('PUT');
    expect(JSON.parse(calls[1]!.init.body as string)).toEqual({ enabled: true });
    expect(st.enabled).toBe(true);
  });

  it('pauses and resumes all coworkers of a workspace', async () => {
    await api.setHold('ws_1', true);
    expect(calls[0]!.url).toBe('/api/workspaces/ws_1/hold');
    expect(calls[0]!.init.method).toBe('PUT');
    expect(JSON.parse(calls[0]!.init.body as string)).toEqual({ held: true });
  });

  it('says what the switch does in each state', () => {
    expect(autostartHint({ enabled: true, available: true, path: '/p/rerun.desktop' })).toContain('starts in the tray');
    expect(autostartHint({ enabled: true, available: true, path: '/p/rerun.desktop' })).toContain('/p/rerun.desktop');
    expect(autostartHint({ enabled: false, available: true, path: '/p' })).toMatch(/^Off/);
    expect(autostartHint({ enabled: false, available: false, path: '' })).toMatch(/^Not available/);
  });
});

describe('when the window closes', () => {
  it('reads and sets the choice of this computer', async () => {
    await api.getPreferences();
    expect(calls[0]!.url).toBe('/api/preferences');
    expect(calls[0]!.init.method).toBe('GET');
    await api.setWhenClosed('quit');
    expect(calls[1]!.url).toBe('/api/preferences');
    expect(calls[1]!.init.method).toBe('PUT');
    expect(JSON.parse(calls[1]!.init.body as string)).toEqual({ when_closed: 'quit' });
  });

  it('offers keeping working first, and says quitting asks', () => {
    expect(WHEN_CLOSED_CHOICES.map((c) => c.id)).toEqual(['background', 'quit']);
    expect(WHEN_CLOSED_CHOICES[1]!.hint).toContain('asking first');
  });
});
