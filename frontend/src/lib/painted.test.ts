import { beforeEach, describe, expect, it } from 'vitest';
import { mark, reportPainted, resetPainted, type Marks } from './painted';

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

  it('sends the marks the page reached, each at its first time', async () => {
    const got: Marks[] = [];
    let t = 300;
    const frame = (cb: () => void) => {
      t += 16;
      cb();
    };
    mark('script_ms', () => 40);
    mark('data_ms', () => 250);
    mark('data_ms', () => 900); // a later load keeps the first
    reportPainted(async (_ms, m) => void got.push(m), frame, () => t);
    await Promise.resolve();
    await Promise.resolve();
    expect(got).toEqual([{ script_ms: 40, data_ms: 250, frame_ms: 316 }]);
  });

  it('swallows a failed report', async () => {
    const frame = (cb: () => void) => cb();
    expect(() => reportPainted(() => Promise.reject(new Error('offline')), frame, () => 1)).not.toThrow();
  });
});
