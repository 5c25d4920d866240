import { describe, expect, it } from 'vitest';
import { coalesce } from './coalesce';

describe('coalesce', () => {
  it('runs once more after the load in flight, however many calls came meanwhile', async () => {
    let runs = 0;
    let release: () => void = () => {};
    const load = coalesce(async () => {
      runs++;
      if (runs === 1) await new Promise<void>((r) => (release = r));
    });
    const a = load();
    await null;
    await null;
    const b = load();
    load();
    expect(a).toBe(b);
    release();
    await a;
    expect(runs).toBe(2);
    await load();
    expect(runs).toBe(3);
  });

  it('passes a failure on and recovers for the next call', async () => {
    let fail = true;
    const load = coalesce(async () => {
      if (fail) throw new Error('down');
    });
    await expect(load()).rejects.toThrow('down');
    fail = false;
    await expect(load()).resolves.toBeUndefined();
  });
});
