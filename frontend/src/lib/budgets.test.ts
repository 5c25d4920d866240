import { describe, expect, it } from 'vitest';
import { limitsDraft, limitsSummary, NO_LIMITS, parseLimits, proposeDailyBudget, spendChart } from './budgets';
import type { ProviderSetting } from './models';

const provider = (configured: boolean) => ({ name: 'anthropic', configured }) as ProviderSetting;

describe('budgets', () => {
  it('reads the limits form: empty is no limit, bad numbers say what to fix', () => {
    const d = limitsDraft({ ...NO_LIMITS, day_usd: 5 });
    expect(d).toEqual({ run_tokens: '', run_usd: '', day_tokens: '', day_usd: '5' });
    expect(parseLimits({ ...d, run_tokens: '50,000' }).limits).toEqual({ run_tokens: 50000, run_usd: 0, day_tokens: 0, day_usd: 5 });
    expect(parseLimits({ ...d, day_usd: 'five' }).problem).toBe('Per day, US dollars: enter a number, or leave it empty for no limit.');
    expect(parseLimits({ ...d, day_tokens: '1.5' }).problem).toBe('Per day, tokens: enter a whole number of tokens.');
    expect(parseLimits({ ...d, run_usd: '-2' }).limits).toBeNull();
  });

  it('proposes a daily budget only when the first provider was just set up and none is set', () => {
    expect(proposeDailyBudget([provider(false)], [provider(true)], NO_LIMITS)).toBe(true);
    expect(proposeDailyBudget([provider(true)], [provider(true)], NO_LIMITS)).toBe(false);
    expect(proposeDailyBudget([provider(false)], [provider(true)], { ...NO_LIMITS, day_usd: 5 })).toBe(false);
    expect(proposeDailyBudget([provider(false)], [provider(false)], NO_LIMITS)).toBe(false);
    expect(proposeDailyBudget(null, [provider(true)], NO_LIMITS)).toBe(false);
  });

  it('draws spend against the daily limit, marking days over it', () => {
    const days = [
      { day: '2026-12-01', tokens: 100, cost_usd: 2 },
      { day: '2026-12-02', tokens: 0, cost_usd: 6 },
    ];
    const c = spendChart(days, 'usd', 5, { width: 200, height: 100, top: 0, bottom: 0 });
    expect(c.bars.map((b) => b.over)).toEqual([false, true]);
    expect(c.today).toBe(6);
    expect(c.limitY).toBeGreaterThan(c.bars[1]!.y); // the limit line sits below the tallest bar's top
    expect(c.bars[0]!.height).toBeCloseTo((2 / 6.6) * 100);
    const tokens = spendChart(days, 'tokens', 1000, { width: 200, height: 100, top: 0, bottom: 0 });
    expect(tokens.limitY).toBeCloseTo(100 - (1000 / 1100) * 100); // the limit is the top when no day reaches it
  });

  it('sums limits up in a few words', () => {
    expect(limitsSummary({ run_tokens: 0, run_usd: 0.5, day_tokens: 200000, day_usd: 0 })).toBe('$0.50 a run, 200,000 tokens a day');
    expect(limitsSummary(NO_LIMITS)).toBe('');
  });
});
