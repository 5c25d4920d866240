import { describe, expect, it } from 'vitest';
import { connectEvents, parseChange, type StreamStatus } from './events';
import type { ChangeEvent } from './events';

class FakeSource {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSED = 2;
  static made: FakeSource[] = [];
  readyState = FakeSource.CONNECTING;
  closed = false;
  private listeners = new Map<string, ((e: Event) => void)[]>();
  constructor(
    readonly url: string,
    readonly init?: EventSourceInit,
  ) {
    FakeSource.made.push(this);
  }
  addEventListener(type: string, fn: (e: Event) => void) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), fn]);
  }
  close() {
    this.closed = true;
    this.readyState = FakeSource.CLOSED;
  }
  emit(type: string, data?: string) {
    if (type === 'open') this.readyState = FakeSource.OPEN;
    const ev = data === undefined ? new Event(type) : new MessageEvent(type, { data });
    for (const fn of this.listeners.get(type) ?? []) fn(ev);
  }
}

function setup() {
  FakeSource.made = [];
  const changes: ChangeEvent[] = [];
  const statuses: StreamStatus[] = [];
  let resyncs = 0;
  const timers: { fn: () => void; ms: number }[] = [];
  const stop = connectEvents({
    onChange: (e) => changes.push(e),
    onResync: () => resyncs++,
    onStatus: (s) => statuses.push(s),
    EventSourceImpl: FakeSource as unknown as typeof EventSource,
    setTimer: (fn, ms) => {
      timers.push({ fn, ms });
      return timers.length;
    },
    clearTimer: () => {},
  });
  return { changes, statuses, timers, stop, resyncs: () => resyncs };
}

describe('connectEvents', () => {
  it('opens /api/events and hands over change events', () => {
    const t = setup();
    const es = FakeSource.made[0]!;
    expect(es.url).toBe('/api/events');
    es.emit('open');
    es.emit('change', JSON.stringify({ workspace: 'ws_1', kind: 'agent.updated', id: 'ag_1' }));
    es.emit('change', 'not json');
    expect(t.changes).toEqual([{ workspace: 'ws_1', kind: 'agent.updated', id: 'ag_1' }]);
    expect(t.statuses).toEqual(['connecting', 'live']);
    expect(t.resyncs()).toBe(0);
  });

  it('asks for a resync when the browser reconnects by itself', () => {
    const t = setup();
    const es = FakeSource.made[0]!;
    es.emit('open');
    es.readyState = FakeSource.CONNECTING;
    es.emit('error');
    es.emit('open');
    expect(t.statuses).toEqual(['connecting', 'live', 'reconnecting', 'live']);
    expect(t.resyncs()).toBe(1);
    expect(FakeSource.made).toHaveLength(1);
  });

  it('opens a new stream with growing delays when the browser gives up', () => {
    const t = setup();
    const first = FakeSource.made[0]!;
    first.readyState = FakeSource.CLOSED;
    first.emit('error');
    expect(first.closed).toBe(true);
    expect(t.timers).toHaveLength(1);
    t.timers[0]!.fn();
    const second = FakeSource.made[1]!;
    second.readyState = FakeSource.CLOSED;
    second.emit('error');
    expect(t.timers[1]!.ms).toBeGreaterThan(t.timers[0]!.ms);
    t.timers[1]!.fn();
    FakeSource.made[2]!.emit('open');
    expect(t.statuses.at(-1)).toBe('live');
  });

  it('tells when the browser gives up, so the API can say whether the token was refused', () => {
    let closed = 0;
    const timers: (() => void)[] = [];
    FakeSource.made = [];
    connectEvents({
      onChange: () => {},
      onClosed: () => closed++,
      EventSourceImpl: FakeSource as unknown as typeof EventSource,
      setTimer: (fn) => timers.push(fn),
      clearTimer: () => {},
    });
    const es = FakeSource.made[0]!;
    es.readyState = FakeSource.CONNECTING;
    es.emit('error'); // the browser retries by itself: not given up
    expect(closed).toBe(0);
    es.readyState = FakeSource.CLOSED;
    es.emit('error');
    expect(closed).toBe(1);
    expect(timers).toHaveLength(1);
  });

  it('stops cleanly', () => {
    const t = setup();
    t.stop();
    expect(FakeSource.made[0]!.closed).toBe(true);
    FakeSource.made[0]!.emit('error');
    expect(t.timers).toHaveLength(0);
  });
});

describe('parseChange', () => {
  it('needs a workspace and a kind', () => {
    expect(parseChange('{"workspace":"ws_1","kind":"box.created","id":"bx_1"}')).toEqual({
      workspace: 'ws_1',
      kind: 'box.created',
      id: 'bx_1',
    });
    expect(parseChange('{"workspace":"ws_1","kind":"workspace.switched"}')).toEqual({
      workspace: 'ws_1',
      kind: 'workspace.switched',
    });
    expect(parseChange('{"workspace":"ws_1","kind":"memory.reembed","text":"12/40"}')).toEqual({
      workspace: 'ws_1',
      kind: 'memory.reembed',
      text: '12/40',
    });
    expect(parseChange('{"workspace":"ws_1","kind":"memory.reembed","text":12}')).toEqual({
      workspace: 'ws_1',
      kind: 'memory.reembed',
    });
    expect(parseChange('{"kind":"box.created"}')).toBeUndefined();
    expect(parseChange('null')).toBeUndefined();
    expect(parseChange('')).toBeUndefined();
  });
});

describe('delta events', () => {
  it('parses a delta and ignores anything else', async () => {
    const { parseDelta } = await import('./events');
    expect(parseDelta('{"workspace":"ws","run":"r","agent":"a","session":"s","text":"Hi "}')).toEqual({
      workspace: 'ws',
      run: 'r',
      agent: 'a',
      session: 's',
      text: 'Hi ',
    });
    expect(parseDelta('{"workspace":"ws"}')).toBeUndefined();
    expect(parseDelta('nope')).toBeUndefined();
  });

  it('hands delta events to onDelta and run ids on change events', () => {
    FakeSource.made = [];
    const deltas: unknown[] = [];
    const changes: ChangeEvent[] = [];
    const stop = connectEvents({
      onChange: (e) => changes.push(e),
      onDelta: (e) => deltas.push(e),
      EventSourceImpl: FakeSource as unknown as typeof EventSource,
    });
    const es = FakeSource.made[0]!;
    es.emit('open');
    es.emit('delta', '{"workspace":"ws","run":"r","agent":"a","session":"s","text":"x"}');
    es.emit('change', '{"workspace":"ws","kind":"run.step","id":"r","agent":"a","session":"s"}');
    expect(deltas).toHaveLength(1);
    expect(changes).toEqual([{ workspace: 'ws', kind: 'run.step', id: 'r', agent: 'a', session: 's' }]);
    stop();
  });
});
