import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError, api } from './api';
import { Session, session } from './session.svelte';

afterEach(() => vi.unstubAllGlobals());

function answer(status: number, body: unknown) {
  vi.stubGlobal('fetch', async () => new Response(JSON.stringify(body), { status }));
}

describe('Session', () => {
  it('signs out once and runs what waits for it once', () => {
    const s = new Session();
    const stop = vi.fn();
    s.whenSignedOut(stop);
    expect(s.signedOut).toBe(false);
    s.signOut();
    s.signOut();
    expect(s.signedOut).toBe(true);
    expect(stop).toHaveBeenCalledTimes(1);
  });

  it('runs at once what asks after the sign-out, and nothing that unsubscribed', () => {
    const s = new Session();
    const gone = vi.fn();
    s.whenSignedOut(gone)();
    s.signOut();
    expect(gone).not.toHaveBeenCalled();
    const late = vi.fn();
    s.whenSignedOut(late);
    expect(late).toHaveBeenCalledTimes(1);
  });
});

describe('session', () => {
  it('is signed out by the first API call that answers 401, and only by that', async () => {
    const stopStream = vi.fn();
    const off = session.whenSignedOut(stopStream);

    answer(404, { error: 'no such agent' });
    await expect(api.getAgent('ws_1', 'ag_1')).rejects.toBeInstanceOf(ApiError);
    answer(409, { error: 'box has agents' });
    await expect(api.deleteBox('ws_1', 'bx_1')).rejects.toMatchObject({ status: 409 });
    vi.stubGlobal('fetch', async () => {
      throw new TypeError('Failed to fetch');
    });
    await expect(api.listWorkspaces()).rejects.toMatchObject({ status: 0 });
    expect(session.signedOut).toBe(false);
    expect(stopStream).not.toHaveBeenCalled();

    answer(401, { error: 'missing or wrong UI token' });
    await expect(api.listCapabilities()).rejects.toMatchObject({ status: 401, message: 'missing or wrong UI token' });
    expect(session.signedOut).toBe(true);
    expect(stopStream).toHaveBeenCalledTimes(1);

    await expect(api.listWorkspaces()).rejects.toMatchObject({ status: 401 });
    expect(stopStream).toHaveBeenCalledTimes(1);
    off();
  });
});
