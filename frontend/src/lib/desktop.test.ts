import { describe, expect, it } from 'vitest';
import { addressOf, ago, holder, NOT_STARTED, readState, shortUrl, typedAddress } from './desktop';
import { ScreenSocket, type Frame } from './desktop.svelte';

describe('readState', () => {
  it('reads the wire shape, tabs included', () => {
    const s = readState({
      running: true,
      url: 'https://a.example/',
      title: 'A',
      tabs: [{ id: 1, url: 'https://a.example/', title: 'A', active: true }, null, { id: 'x2', url: 'u' }],
      in_control: true,
      waiting: true,
      last_action: 'clicked [12] Sign in',
      last_action_at: '2026-01-01T10:00:00Z',
      can_go_back: true,
      can_go_forward: 'yes',
    });
    expect(s).toEqual({
      running: true,
      url: 'https://a.example/',
      title: 'A',
      tabs: [
        { id: '1', url: 'https://a.example/', title: 'A', active: true },
        { id: 'x2', url: 'u', title: '', active: false },
      ],
      in_control: true,
      waiting: true,
      last_action: 'clicked [12] Sign in',
      last_action_at: '2026-01-01T10:00:00Z',
      can_go_back: true,
      can_go_forward: false,
    });
  });
  it('missing fields are zero; a zero time is no time', () => {
    expect(readState({})).toEqual(NOT_STARTED);
    expect(readState({ last_action_at: '0001-01-01T00:00:00Z' }).last_action_at).toBeNull();
  });
});

describe('holder', () => {
  const on = { ...NOT_STARTED, running: true };
  const cases = [
    { name: 'no state yet', s: null, want: { who: 'off', text: 'Browser not started' } },
    { name: 'not running', s: NOT_STARTED, want: { who: 'off', text: 'Browser not started' } },
    { name: 'the agent has it', s: on, want: { who: 'agent', text: 'Ada is using its browser' } },
    { name: 'the person has it', s: { ...on, in_control: true }, want: { who: 'you', text: 'You have the browser' } },
    { name: 'the agent waits for the person', s: { ...on, in_control: true, waiting: true }, want: { who: 'waiting', text: 'Waiting: you have the browser' } },
  ] as const;
  for (const c of cases) {
    it(c.name, () => {
      expect(holder(c.s, 'Ada')).toEqual(c.want);
    });
  }
});

describe('shortUrl and ago', () => {
  it('drops the scheme and a bare slash', () => {
    expect(shortUrl('https://a.example/')).toBe('a.example');
    expect(shortUrl('http://127.0.0.1:8080/login?next=%2F#top')).toBe('127.0.0.1:8080/login?next=%2F#top');
    expect(shortUrl('about:blank')).toBe('about:blank');
    expect(shortUrl('data:text/html,hi')).toBe('data:text/html,hi');
    expect(shortUrl('')).toBe('');
  });
  it('ago', () => {
    const now = Date.parse('2026-01-01T10:00:00Z');
    expect(ago(null, now)).toBe('');
    expect(ago('2026-01-01T09:59:58Z', now)).toBe('just now');
    expect(ago('2026-01-01T09:59:30Z', now)).toBe('30 s ago');
    expect(ago('2026-01-01T09:57:00Z', now)).toBe('3 min ago');
    expect(ago('2026-01-01T07:00:00Z', now)).toBe('3 h ago');
  });
});

describe('the address bar', () => {
  it('shows the whole address, nothing for a blank tab', () => {
    expect(addressOf('http://127.0.0.1:8080/login?next=%2F')).toBe('http://127.0.0.1:8080/login?next=%2F');
    expect(addressOf('https://a.example/')).toBe('https://a.example/');
    expect(addressOf('about:blank')).toBe('');
    expect(addressOf('')).toBe('');
  });
  it('sends what was typed, trimmed; the server reads it (a bare host gets https://)', () => {
    expect(typedAddress('  example.com/x ')).toEqual({ action: 'go', url: 'example.com/x' });
    expect(typedAddress('javascript:alert(1)')).toEqual({ action: 'go', url: 'javascript:alert(1)' });
    expect(typedAddress('   ')).toBeNull();
    expect(typedAddress('')).toBeNull();
  });
});

// ---- the socket ----

class FakeWS {
  static made: FakeWS[] = [];
  readyState = 0;
  binaryType = '';
  sent: string[] = [];
  closed = false;
  onopen: (() => void) | null = null;
  onmessage: ((e: { data: unknown }) => void) | null = null;
  onclose: (() => void) | null = null;
  constructor(readonly url: string) {
    FakeWS.made.push(this);
  }
  send(s: string) {
    this.sent.push(s);
  }
  close() {
    this.closed = true;
    this.readyState = 3;
  }
  open() {
    this.readyState = 1;
    this.onopen?.();
  }
  message(data: unknown) {
    this.onmessage?.({ data });
  }
  drop() {
    this.readyState = 3;
    this.onclose?.();
  }
}

const flush = () => new Promise((r) => setTimeout(r, 0));

function setup() {
  FakeWS.made = [];
  const timers: { fn: () => void; ms: number; cleared?: boolean }[] = [];
  let drops = 0;
  const s = new ScreenSocket('/api/workspaces/w/agents/a/browser/screen', {
    address: async (p) => `ws://127.0.0.1:7777${p}`,
    WebSocketImpl: FakeWS as unknown as typeof WebSocket,
    setTimer: (fn, ms) => {
      const t = { fn, ms };
      timers.push(t);
      return t;
    },
    clearTimer: (t) => ((t as { cleared?: boolean }).cleared = true),
    random: () => 0,
    onDropped: () => drops++,
  });
  const frames: Frame[] = [];
  s.onFrame((f) => frames.push(f));
  return { s, timers, frames, drops: () => drops, ws: () => FakeWS.made.at(-1)! };
}

describe('ScreenSocket', () => {
  it('pairs each JPEG with the header before it; state messages set the state', async () => {
    const { s, frames, ws } = setup();
    s.open();
    await flush();
    expect(ws().url).toBe('ws://127.0.0.1:7777/api/workspaces/w/agents/a/browser/screen');
    expect(ws().binaryType).toBe('blob');
    ws().open();
    expect(s.status).toBe('live');
    ws().message('{"type":"error","message":"take over the browser before sending input to it"}');
    expect(s.error).toBe('take over the browser before sending input to it');
    ws().message('{"type":"state","running":true,"url":"https://a.example/","in_control":false}');
    expect(s.state?.running).toBe(true);
    expect(s.error).toBe('');
    ws().message('{"type":"frame","width":1280,"height":800,"url":"https://a.example/","title":"A"}');
    const jpeg = new Blob([new Uint8Array([0xff, 0xd8])], { type: 'image/jpeg' });
    ws().message(jpeg);
    expect(frames).toHaveLength(1);
    expect(frames[0]!.header).toMatchObject({ width: 1280, height: 800, title: 'A' });
    expect(frames[0]!.data).toBe(jpeg);
    expect(s.header).toMatchObject({ width: 1280, height: 800 });
    // A JPEG without its own header keeps the last size.
    ws().message(jpeg);
    expect(frames).toHaveLength(2);
    expect(frames[1]!.header.width).toBe(1280);
  });

  it('a view that opens later gets the newest frame first (a still page sends no more); close forgets it', async () => {
    const { s, ws } = setup();
    s.open();
    await flush();
    ws().open();
    const jpeg = new Blob([new Uint8Array([0xff, 0xd8])], { type: 'image/jpeg' });
    ws().message('{"type":"frame","width":1280,"height":800,"url":"https://a.example/","title":"A"}');
    ws().message(jpeg);
    const late: Frame[] = [];
    const off = s.onFrame((f) => late.push(f));
    expect(late).toHaveLength(1);
    expect(late[0]!.data).toBe(jpeg);
    expect(late[0]!.header.width).toBe(1280);
    off();
    s.close();
    const after: Frame[] = [];
    s.onFrame((f) => after.push(f));
    expect(after).toHaveLength(0);
  });

  it('drops a JPEG before any header (its size is unknown)', async () => {
    const { s, frames, ws } = setup();
    s.open();
    await flush();
    ws().open();
    ws().message(new Blob([new Uint8Array([1])]));
    expect(frames).toHaveLength(0);
  });

  it('sends input only while open', async () => {
    const { s, ws } = setup();
    expect(s.send({ type: 'type', text: 'x' })).toBe(false);
    s.open();
    await flush();
    expect(s.send({ type: 'type', text: 'x' })).toBe(false);
    ws().open();
    expect(s.send({ type: 'mousemove', x: 1, y: 2 })).toBe(true);
    expect(ws().sent).toEqual(['{"type":"mousemove","x":1,"y":2}']);
  });

  it('reconnects with a growing delay, and starts over once a message arrives', async () => {
    const { s, timers, drops, ws } = setup();
    s.open();
    await flush();
    ws().drop();
    expect(s.status).toBe('reconnecting');
    expect(drops()).toBe(1);
    expect(timers.map((t) => t.ms)).toEqual([500]);
    timers[0]!.fn();
    await flush();
    expect(FakeWS.made).toHaveLength(2);
    ws().drop();
    expect(timers.map((t) => t.ms)).toEqual([500, 1000]);
    timers[1]!.fn();
    await flush();
    ws().open();
    ws().message('{"type":"state","running":true}');
    ws().drop();
    expect(timers.map((t) => t.ms)).toEqual([500, 1000, 500]);
  });

  it('close stops for good: no reconnect, the socket closed', async () => {
    const { s, timers, ws } = setup();
    s.open();
    await flush();
    const first = ws();
    first.drop();
    s.close();
    expect(timers[0]!.cleared).toBe(true);
    expect(s.status).toBe('closed');
    s.open();
    await flush();
    const second = ws();
    expect(second).not.toBe(first);
    s.close();
    expect(second.closed).toBe(true);
    second.drop(); // a late close event of the old socket
    expect(timers).toHaveLength(1);
  });
});
