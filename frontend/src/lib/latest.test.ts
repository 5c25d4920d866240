import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { latestSearch } from './latest';

/** An ask whose answers the test releases one by one, in any order. */
function asks() {
  const pending = new Map<string, { resolve: (v: string) => void; reject: (e: Error) => void }>();
  const sent: string[] = [];
  const ask = (q: string) =>
    new Promise<string>((resolve, reject) => {
      sent.push(q);
      pending.set(q, { resolve, reject });
    });
  return { ask, sent, answer: (q: string) => pending.get(q)!.resolve(`results for ${q}`), fail: (q: string) => pending.get(q)!.reject(new Error(`${q} failed`)) };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('latestSearch', () => {
  it('waits for a pause in the typing and asks once', async () => {
    const a = asks();
    const got: string[] = [];
    const s = latestSearch(a.ask, { answer: (r) => got.push(r), error: () => {} }, 250);
    s.search('e');
    await vi.advanceTimersByTimeAsync(100);
    s.search('ev');
    await vi.advanceTimersByTimeAsync(100);
    s.search('every');
    await vi.advanceTimersByTimeAsync(249);
    expect(a.sent).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(a.sent).toEqual(['every']);
    a.answer('every');
    await vi.advanceTimersByTimeAsync(0);
    expect(got).toEqual(['results for every']);
  });

  it('asks at once when told to', async () => {
    const a = asks();
    const s = latestSearch(a.ask, { answer: () => {}, error: () => {} }, 250);
    s.search('', { now: true });
    await vi.advanceTimersByTimeAsync(0);
    expect(a.sent).toEqual(['']);
  });

  it('drops an older answer that arrives after a newer one', async () => {
    const a = asks();
    const got: string[] = [];
    const s = latestSearch(a.ask, { answer: (r) => got.push(r), error: () => {} }, 250);
    s.search('git');
    await vi.advanceTimersByTimeAsync(250);
    s.search('github');
    await vi.advanceTimersByTimeAsync(250);
    expect(a.sent).toEqual(['git', 'github']);
    a.answer('github');
    await vi.advanceTimersByTimeAsync(0);
    a.answer('git');
    await vi.advanceTimersByTimeAsync(0);
    expect(got).toEqual(['results for github']);
  });

  it('drops the answer to an ask the typing went past, even before the next ask is sent', async () => {
    const a = asks();
    const got: string[] = [];
    const s = latestSearch(a.ask, { answer: (r) => got.push(r), error: () => {} }, 250);
    s.search('git');
    await vi.advanceTimersByTimeAsync(250);
    s.search('gith');
    a.answer('git');
    await vi.advanceTimersByTimeAsync(0);
    expect(got).toEqual([]);
  });

  it('reports only the newest failure, and nothing after cancel', async () => {
    const a = asks();
    const errors: string[] = [];
    const got: string[] = [];
    const s = latestSearch(a.ask, { answer: (r) => got.push(r), error: (e) => errors.push((e as Error).message) }, 250);
    s.search('a');
    await vi.advanceTimersByTimeAsync(250);
    s.search('b');
    await vi.advanceTimersByTimeAsync(250);
    a.fail('a');
    a.fail('b');
    await vi.advanceTimersByTimeAsync(0);
    expect(errors).toEqual(['b failed']);
    s.search('c');
    await vi.advanceTimersByTimeAsync(250);
    s.cancel();
    a.answer('c');
    s.search('d');
    s.cancel();
    await vi.advanceTimersByTimeAsync(1000);
    expect(a.sent).toEqual(['a', 'b', 'c']);
    expect(got).toEqual([]);
  });
});
