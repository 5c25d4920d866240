import { describe, expect, it } from 'vitest';
import { ago, deviceLabel, linkRequest, sizeLabel, syncBadge, type LinkForm, type RelayStatus } from './relay';

const form = (f: Partial<LinkForm>): LinkForm => ({ mode: 'signup', url: '', token: '', workspaceId: '', secret: '', ...f });

describe('linkRequest', () => {
  it.each([
    ['no URL', form({ token: 't' }), 'address'],
    ['not http', form({ url: 'ftp://relay.example.com', token: 't' }), 'https://'],
    ['plain http to another computer', form({ url: 'http://relay.example.com', token: 't' }), 'plain http'],
    ['no signup token', form({ url: 'https://relay.example.com' }), 'signup token'],
    ['no secret', form({ mode: 'operator', url: 'https://r.example', workspaceId: 'ws_1' }), 'secret'],
  ])('%s: says what to fix', (_, f, want) => {
    const got = linkRequest(f);
    expect('error' in got && got.error).toContain(want);
  });

  it('trims and sends a signup link', () => {
    expect(linkRequest(form({ url: ' https://relay.example.com/ ', token: ' s1 ' }))).toEqual({
      body: { relay_url: 'https://relay.example.com', signup_token: 's1' },
    });
  });

  it('sends the operator’s id and secret, http on this computer allowed', () => {
    expect(linkRequest(form({ mode: 'operator', url: 'http://127.0.0.1:8080', workspaceId: ' ws_1 ', secret: 'rrs_x' }))).toEqual({
      body: { relay_url: 'http://127.0.0.1:8080', workspace_id: 'ws_1', secret: 'rrs_x' },
    });
  });
});

describe('syncBadge', () => {
  const now = new Date('2026-01-02T10:00:00Z');
  const base: RelayStatus = { linked: true, connected: true, delivered: 0, automations_device: true, relay_url: 'https://r' };
  it('is null when not linked', () => expect(syncBadge({ ...base, linked: false }, now)).toBeNull());
  it('says offline with the reason', () => {
    const b = syncBadge({ ...base, connected: false, last_error: 'dial tcp: refused' }, now);
    expect(b).toMatchObject({ tone: 'off', text: 'Offline' });
    expect(b?.title).toContain('refused');
  });
  it('counts pending changes', () => expect(syncBadge({ ...base, sync: { enabled: true, pending: 3 } }, now)?.text).toBe('Pending 3'));
  it('says when it last synced', () =>
    expect(syncBadge({ ...base, sync: { enabled: true, pending: 0, last_sync: '2026-01-02T09:55:00Z' } }, now)?.text).toBe('Synced 5 min ago'));
  it('says connected otherwise', () => expect(syncBadge(base, now)).toMatchObject({ tone: 'ok', text: 'Connected' }));
});

describe('ago and sizeLabel', () => {
  const now = new Date('2026-01-02T10:00:00Z');
  it.each([
    ['2026-01-02T09:59:50Z', 'just now'],
    ['2026-01-02T09:30:00Z', '30 min ago'],
    ['2026-01-02T07:00:00Z', '3 h ago'],
    ['2025-12-30T10:00:00Z', '3 d ago'],
  ])('%s → %s', (iso, want) => expect(ago(iso, now)).toBe(want));
  it('is empty without a time', () => expect(ago(undefined, now)).toBe(''));
  it.each([
    [512, '512 B'],
    [2048, '2.0 KiB'],
    [3 << 20, '3.0 MiB'],
  ])('%d → %s', (n, want) => expect(sizeLabel(n)).toBe(want));
});

describe('deviceLabel', () => {
  it('names this device, and one without a name by its id', () => {
    expect(deviceLabel({ id: 'dev_abcd1234', name: 'studio', this: true, automations: false })).toBe('studio (this device)');
    expect(deviceLabel({ id: 'dev_abcdk3f9', this: false, automations: true })).toBe('Device …k3f9');
  });
});

describe('syncBadge with device sync', () => {
  const linked: RelayStatus = { linked: true, connected: true, delivered: 0, automations_device: true, relay_url: 'https://r.example' };
  it('says a failing sync, with its error in the title', () => {
    const b = syncBadge({ ...linked, sync: { enabled: true, pending: 0, last_error: 'push: 500' } });
    expect(b).toMatchObject({ tone: 'warn', text: 'Sync failing' });
    expect(b?.title).toContain('push: 500');
  });
  it('counts pending changes, then says when it last synced', () => {
    const now = new Date('2026-01-01T12:00:00Z');
    expect(syncBadge({ ...linked, sync: { enabled: true, pending: 3 } }, now)?.text).toBe('Pending 3');
    expect(syncBadge({ ...linked, sync: { enabled: true, pending: 0, last_sync: '2026-01-01T11:58:00Z' } }, now)?.text).toBe('Synced 2 min ago');
  });
});
