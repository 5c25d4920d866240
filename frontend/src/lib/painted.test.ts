import { beforeEach, describe, expect, it } from 'vitest';
import { reportPainted, resetPainted } from './painted';

describe('board painted', () => {
  beforeEach(() => resetPainted());

  it('reports once, two frames after the board is on screen', async () => {
    const sent: number[] = [];
    const frames: (() => void)[] = [];
    const frame = (cb: () => void) => void frames.push(cb);
    reportPainted(async (ms) => void sent.push(ms), frame, () => 321);
    reportPainted(async (ms) => void sent.push(ms), frame, () => 999); // a second load: nothing more
    expect(sent).toEqual([]);
    frames.shift()!();
    expect(sent).toEqual([]);
    frames.shift()!();
    await Promise.resolve();
    await Promise.resolve();
    expect(sent).toEqual([321]);
    expect(frames).toHaveLength(0);
  });

  it('swallows a failed report', async () => {
    const frame = (cb: () => void) => cb();
    expect(() => reportPainted(() => Promise.reject(new Error('offline')), frame, () => 1)).not.toThrow();
  });
});
