// Spend budgets: the limits form, the daily budget proposed when a model
// provider is first set up, and the chart of spend against a daily limit.
import type { ProviderSetting } from './models';

/** Spend limits of the workspace or an agent; 0 is none. */
export type BudgetLimits = { run_tokens: number; run_usd: number; day_tokens: number; day_usd: number };

export type DaySpend = { day: string; tokens: number; cost_usd: number };

/** A scope's limits and its spend per day, oldest first. */
export type Budget = { limits: BudgetLimits; days: DaySpend[] };

export const NO_LIMITS: BudgetLimits = { run_tokens: 0, run_usd: 0, day_tokens: 0, day_usd: 0 };

/** The daily workspace budgets proposed in US dollars. */
export const DAILY_CHOICES = [5, 20, 50];

/** The limits form's fields, as typed: '' is no limit. */
export type LimitsDraft = Record<keyof BudgetLimits, string>;

export const FIELDS: { key: keyof BudgetLimits; label: string; usd: boolean }[] = [
  { key: 'run_usd', label: 'Per run, US dollars', usd: true },
  { key: 'run_tokens', label: 'Per run, tokens', usd: false },
  { key: 'day_usd', label: 'Per day, US dollars', usd: true },
  { key: 'day_tokens', label: 'Per day, tokens', usd: false },
];

export const limitsDraft = (l: BudgetLimits): LimitsDraft => ({
  run_tokens: l.run_tokens ? String(l.run_tokens) : '',
  run_usd: l.run_usd ? String(l.run_usd) : '',
  day_tokens: l.day_tokens ? String(l.day_tokens) : '',
  day_usd: l.day_usd ? String(l.day_usd) : '',
});

/** The limits of a draft, or the first field's problem. Empty is no limit (0). */
export function parseLimits(d: LimitsDraft): { limits: BudgetLimits | null; problem: string } {
  const out = { ...NO_LIMITS };
  for (const f of FIELDS) {
    const raw = d[f.key].replace(/[$,\s_]/g, '');
    if (raw === '') continue;
    const v = Number(raw);
    if (!/^\d*\.?\d+$/.test(raw) || !Number.isFinite(v)) return { limits: null, problem: `${f.label}: enter a number, or leave it empty for no limit.` };
    if (!f.usd && !Number.isInteger(v)) return { limits: null, problem: `${f.label}: enter a whole number of tokens.` };
    out[f.key] = v;
  }
  return { limits: out, problem: '' };
}

/** Propose a daily workspace budget when the first provider was just set up and no daily budget is set. */
export function proposeDailyBudget(before: ProviderSetting[] | null, after: ProviderSetting[], limits: BudgetLimits | null): boolean {
  if (!before || !limits) return false;
  const had = before.some((p) => p.configured);
  const has = after.some((p) => p.configured);
  return !had && has && limits.day_usd === 0 && limits.day_tokens === 0;
}

export type SpendBar = { day: string; value: number; x: number; y: number; width: number; height: number; over: boolean };

/** Bars of each day's spend in one unit against a daily limit, scaled so the limit line always shows. */
export function spendChart(
  days: DaySpend[],
  unit: 'usd' | 'tokens',
  limit: number,
  box: { width: number; height: number; top: number; bottom: number },
): { bars: SpendBar[]; limitY: number; today: number } {
  const value = (d: DaySpend) => (unit === 'usd' ? d.cost_usd : d.tokens);
  const top = Math.max(limit, ...days.map(value), 1e-9) * 1.1;
  const inner = box.height - box.top - box.bottom;
  const step = days.length ? box.width / days.length : 0;
  const y = (v: number) => box.top + inner - (v / top) * inner;
  const bars = days.map((d, i) => {
    const v = value(d);
    return { day: d.day, value: v, x: i * step + step * 0.15, y: y(v), width: step * 0.7, height: (v / top) * inner, over: limit > 0 && v > limit };
  });
  return { bars, limitY: y(limit), today: days.length ? value(days[days.length - 1]!) : 0 };
}

/** Limits in a few words: "$0.50 a run, 200,000 tokens a day"; '' when none is set. */
export function limitsSummary(l: BudgetLimits): string {
  const usd = (v: number) => `$${v.toFixed(2)}`;
  const tok = (v: number) => `${v.toLocaleString('en-US')} tokens`;
  const parts: string[] = [];
  if (l.run_usd) parts.push(`${usd(l.run_usd)} a run`);
  if (l.run_tokens) parts.push(`${tok(l.run_tokens)} a run`);
  if (l.day_usd) parts.push(`${usd(l.day_usd)} a day`);
  if (l.day_tokens) parts.push(`${tok(l.day_tokens)} a day`);
  return parts.join(', ');
}

/**
 * The draft after the limits changed elsewhere (another window, update_agent,
 * a card's "raise"): each field still as `before` had it takes its new value;
 * a field the person is editing keeps what they typed.
 */
export function rebaseDraft(draft: LimitsDraft, before: BudgetLimits, after: BudgetLimits): LimitsDraft {
  const was = limitsDraft(before);
  const now = limitsDraft(after);
  const out = { ...draft };
  for (const f of FIELDS) if (draft[f.key] === was[f.key]) out[f.key] = now[f.key];
  return out;
}
