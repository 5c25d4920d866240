// Geometry of the usage chart (tokens as bars, cost as a line), pure so it is tested.

export type DayUsage = { day: string; runs: number; input_tokens: number; output_tokens: number; cost_usd: number };

export type ChartBox = { width: number; height: number; left: number; right: number; top: number; bottom: number };

export type ChartBar = { day: string; x: number; y: number; width: number; height: number; tokens: number; cost: number; runs: number };
export type Tick = { value: number; y: number };

export type UsageChart = {
  bars: ChartBar[];
  /** SVG path of the cost line through the middle of each bar; '' without cost. */
  costPath: string;
  costPoints: { x: number; y: number }[];
  tokenTicks: Tick[];
  costTicks: Tick[];
  /** x labels: first, middle and last day. */
  dayLabels: { x: number; label: string }[];
  maxTokens: number;
  maxCost: number;
};

/** A round upper bound ≥ v: 1, 2, 2.5, 5 × 10^n (0 → 1). */
export function niceCeil(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (v <= m * p * (1 + 1e-9)) return m * p;
  return 10 * p;
}

/** "28 Nov" from "2026-11-28". */
export function dayLabel(day: string): string {
  const [y, m, d] = day.split('-').map(Number);
  if (!y || !m || !d) return day;
  return new Date(Date.UTC(y, m - 1, d)).toLocaleDateString([], { day: 'numeric', month: 'short', timeZone: 'UTC' });
}

export function usageChart(days: DayUsage[], box: ChartBox): UsageChart {
  const plotW = Math.max(1, box.width - box.left - box.right);
  const plotH = Math.max(1, box.height - box.top - box.bottom);
  const base = box.top + plotH;
  const n = Math.max(1, days.length);
  const slot = plotW / n;
  const barW = Math.max(1, slot * 0.64);
  const maxTokens = niceCeil(Math.max(0, ...days.map((d) => d.input_tokens + d.output_tokens)));
  const maxCost = niceCeil(Math.max(0, ...days.map((d) => d.cost_usd)));
  const bars = days.map((d, i) => {
    const tokens = d.input_tokens + d.output_tokens;
    const h = (tokens / maxTokens) * plotH;
    return {
      day: d.day,
      x: box.left + i * slot + (slot - barW) / 2,
      y: base - h,
      width: barW,
      height: h,
      tokens,
      cost: d.cost_usd,
      runs: d.runs,
    };
  });
  const costPoints = days.map((d, i) => ({
    x: box.left + i * slot + slot / 2,
    y: base - (d.cost_usd / maxCost) * plotH,
  }));
  const anyCost = days.some((d) => d.cost_usd > 0);
  const costPath = anyCost
    ? costPoints.map((p, i) => `${i ? 'L' : 'M'}${p.x.toFixed(1)} ${p.y.toFixed(1)}`).join(' ')
    : '';
  const ticks = (max: number): Tick[] => [0, 0.5, 1].map((f) => ({ value: max * f, y: base - f * plotH }));
  const labelAt = days.length ? [0, Math.floor((days.length - 1) / 2), days.length - 1].filter((v, i, a) => a.indexOf(v) === i) : [];
  return {
    bars,
    costPath,
    costPoints: anyCost ? costPoints : [],
    // Tokens are whole: no 0.5 tick on an empty or tiny chart.
    tokenTicks: ticks(maxTokens).filter((t) => Number.isInteger(t.value)),
    costTicks: anyCost ? ticks(maxCost) : [],
    dayLabels: labelAt.map((i) => ({ x: box.left + i * slot + slot / 2, label: dayLabel(days[i]!.day) })),
    maxTokens,
    maxCost,
  };
}
