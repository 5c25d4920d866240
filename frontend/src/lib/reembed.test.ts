import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { countLabel, isDone, LINGER_MS, mergeReembed, parseReembed, percent, STALL_MS } from './reembed';
import { ReembedState } from './reembed.svelte';

describe('parseReembed', () => {
  it('parses done/total', () => {
    expect(parseReembed('12/40')).toEqual({ done: 12, total: 40 });
    expect(parseReembed(' 0 / 3 ')).toEqual({ done: 0, total: 3 });
  });

  it('knows when it is done', () => {
    const p = parseReembed('40/40')!;
    expect(isDone(p)).toBe(true);
    expect(percent(p)).toBe(100);
    expect(isDone(parseReembed('39/40')!)).toBe(false);
    expect(percent(parseReembed('12/40')!)).toBe(30);
    expect(countLabel(parseReembed('12/40')!)).toBe('12 / 40');
  });

  it('ignores malformed text', () => {
    for (const t of [undefined, null, 12, '', '12', '/40', '12/', 'a/b', '12/40/2', '-1/40', '1.5/40', '41/40', '0/0', '12 of 40', '99999999999/99999999999'])
      expect(parseReembed(t), String(t)).toBeUndefined();
  });
});

describe('mergeReembed', () => {
  it('keeps the max when updates arrive out of order', () => {
    let p = mergeReembed(undefined, { done: 20, total: 40 });
    p = mergeReembed(p, { done: 12, total: 40 });
    expect(p).toEqual({ done: 20, total: 40 });
    p = mergeReembed(p, { done: 40, total: 40 });
    p = mergeReembed(p, { done: 32, total: 40 });
    expect(p).toEqual({ done: 40, total: 40 });
  });

  it('takes a new total as a new re-embed', () => {
    expect(mergeReembed({ done: 40, total: 40 }, { done: 2, total: 7 })).toEqual({ done: 2, total: 7 });
  });
});

describe('ReembedState', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const ev = (text: unknown, workspace = 'ws_1', kind = 'memory.reembed') => ({ workspace, kind, text: text as string });

  it('follows one workspace and hides a few seconds after done', () => {
    const s = new ReembedState();
    s.onChange(ev('12/40'));
    expect(s.of('ws_1')).toEqual({ done: 12, total: 40 });
    expect(s.of('ws_2')).toBeUndefined();
    s.onChange(ev('oops'));
    s.onChange(ev('3/40', 'ws_1', 'memory.changed'));
    s.onChange(ev('8/40'));
    expect(s.of('ws_1')).toEqual({ done: 12, total: 40 });
    s.onChange(ev('40/40'));
    expect(s.of('ws_1')).toEqual({ done: 40, total: 40 });
    vi.advanceTimersByTime(LINGER_MS - 1);
    expect(s.of('ws_1')).toBeDefined();
    vi.advanceTimersByTime(1);
    expect(s.of('ws_1')).toBeUndefined();
  });

  it('hides a re-embed that stopped sending updates', () => {
    const s = new ReembedState();
    s.onChange(ev('1/40'));
    vi.advanceTimersByTime(STALL_MS - 1);
    s.onChange(ev('2/40'));
    vi.advanceTimersByTime(STALL_MS - 1);
    expect(s.of('ws_1')).toEqual({ done: 2, total: 40 });
    vi.advanceTimersByTime(1);
    expect(s.of('ws_1')).toBeUndefined();
  });

  it('does not mix workspaces', () => {
    const s = new ReembedState();
    s.onChange(ev('30/40', 'ws_1'));
    s.onChange(ev('5/40', 'ws_2'));
    expect(s.of('ws_2')).toEqual({ done: 5, total: 40 });
    expect(s.of('ws_1')).toBeUndefined();
  });
});
