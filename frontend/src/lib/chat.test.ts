import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ChatState } from './chat.svelte';
import type { RunDetail, Transcript } from './runs';

describe('ChatState status while the person holds the browser', () => {
  let waiting: boolean;
  beforeEach(() => {
    waiting = false;
    vi.stubGlobal('fetch', async (url: string) => {
      if (url.endsWith('/browser')) return new Response(JSON.stringify({ running: true, waiting, in_control: waiting, tabs: [] }));
      return new Response(JSON.stringify({ error: `no route ${url}` }), { status: 404 });
    });
  });
  afterEach(() => vi.unstubAllGlobals());

  const running = (): Transcript =>
    ({
      session: { id: 'ses_1' },
      runs: [
        {
          id: 'run_1',
          status: 'running',
          steps: [{ kind: 'tool_call', data: { id: 'c1', name: 'browser_click', input: {} } }],
        } as unknown as RunDetail,
      ],
      pause: null,
    }) as unknown as Transcript;

  it('says the run waits for the hand-back, and goes back after it', async () => {
    const chat = new ChatState('ws_1', 'ag_1');
    chat.sessionId = 'ses_1';
    chat.transcript = running();
    expect(chat.status).toBe('Running browser_click…');
    waiting = true;
    await chat.onBrowser({ workspace: 'ws_1', kind: 'browser.updated', agent: 'ag_1' });
    expect(chat.status).toBe('Waiting: you have the browser');
    waiting = false;
    await chat.onBrowser({ workspace: 'ws_1', kind: 'browser.updated', agent: 'ag_1' });
    expect(chat.status).toBe('Running browser_click…');
  });

  it('ignores other agents', async () => {
    const chat = new ChatState('ws_1', 'ag_1');
    waiting = true;
    await chat.onBrowser({ workspace: 'ws_1', kind: 'browser.updated', agent: 'ag_2' });
    expect(chat.browserWaits).toBe(false);
  });
});

describe('ChatState.send', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('resolves once the server has taken the message, while the transcript still loads', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const transcript = { session: { id: 'ses_1' }, runs: [], pause: null };
    vi.stubGlobal('fetch', async (url: string, init?: RequestInit) => {
      if (url.endsWith('/messages') && init?.method === 'POST') return new Response(JSON.stringify({ id: 'run_1', session_id: 'ses_1' }));
      if (url.endsWith('/sessions/ses_1')) {
        await held; // the answer is still streaming: refreshes keep coming
        return new Response(JSON.stringify(transcript));
      }
      if (url.endsWith('/sessions')) return new Response(JSON.stringify([{ id: 'ses_1' }]));
      return new Response(JSON.stringify({ error: `no route ${url}` }), { status: 404 });
    });
    const chat = new ChatState('ws_1', 'ag_1');
    await chat.send('hello');
    expect(chat.sessionId).toBe('ses_1');
    expect(chat.transcript).toBe(null);
    release();
    await vi.waitFor(() => expect(chat.transcript?.session.id).toBe('ses_1'));
    expect(chat.error).toBe('');
  });

  it('a message the server refuses rejects, so the message box keeps it', async () => {
    vi.stubGlobal('fetch', async () => new Response(JSON.stringify({ error: 'the agent is paused' }), { status: 409 }));
    const chat = new ChatState('ws_1', 'ag_1');
    await expect(chat.send('hello')).rejects.toThrow(/paused/);
  });
});
