import { describe, expect, it } from 'vitest';
import { niceCeil, usageChart } from './chart';
import type { DayUsage } from './chart';

const box = { width: 400, height: 150, left: 40, right: 40, top: 10, bottom: 20 };
const day = (d: string, tokens: number, cost: number): DayUsage => ({
  day: d,
  runs: tokens ? 1 : 0,
  input_tokens: tokens,
  output_tokens: 0,
  cost_usd: cost,
});

describe('usage chart', () => {
  it('rounds the scale up to a nice number', () => {
    expect(niceCeil(0)).toBe(1);
    expect(niceCeil(96)).toBe(100);
    expect(niceCeil(130)).toBe(200);
    expect(niceCeil(0.000061)).toBeCloseTo(0.0001);
    expect(niceCeil(2.2)).toBe(2.5);
    expect(niceCeil(5)).toBe(5);
  });

  it('puts one bar per day, scaled to the busiest day', () => {
    const c = usageChart([day('2026-11-28', 0, 0), day('2026-11-29', 50, 0.5), day('2026-11-30', 100, 1)], box);
    expect(c.maxTokens).toBe(100);
    expect(c.bars).toHaveLength(3);
    const plotH = 150 - 10 - 20;
    expect(c.bars[0]!.height).toBe(0);
    expect(c.bars[1]!.height).toBeCloseTo(plotH / 2);
    expect(c.bars[2]!.y).toBeCloseTo(10);
    // bars sit in equal slots inside the plot, left to right
    expect(c.bars[0]!.x).toBeGreaterThanOrEqual(40);
    expect(c.bars[2]!.x + c.bars[2]!.width).toBeLessThanOrEqual(360);
    expect(c.bars[1]!.x - c.bars[0]!.x).toBeCloseTo(320 / 3);
    // the cost line goes through the middle of each slot
    expect(c.costPath.startsWith('M')).toBe(true);
    expect(c.costPoints[2]!.y).toBeCloseTo(10);
    expect(c.tokenTicks.map((t) => t.value)).toEqual([0, 50, 100]);
    expect(c.dayLabels.map((l) => l.x)).toEqual(c.costPoints.map((p) => p.x));
  });

  it('labels whole tokens only: an empty chart has no 0.5 tick', () => {
    expect(usageChart([day('2026-11-30', 0, 0)], box).tokenTicks.map((t) => t.value)).toEqual([0, 1]);
  });

  it('draws no cost line when nothing cost anything', () => {
    const c = usageChart([day('2026-11-30', 10, 0)], box);
    expect(c.costPath).toBe('');
    expect(c.costTicks).toEqual([]);
    expect(c.dayLabels).toHaveLength(1);
  });

  it('copes with no days', () => {
    const c = usageChart([], box);
    expect(c.bars).toEqual([]);
    expect(c.dayLabels).toEqual([]);
  });
});
