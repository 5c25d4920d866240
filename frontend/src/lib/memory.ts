// How a memory's strength and age read in the Memory tab (pure).

export type MemoryState = 'active' | 'retired' | 'superseded';

/** One remembered fact of an agent. An empty source: written by a person. */
export type Memory = {
  id: string;
  agent_id: string;
  text: string;
  source: { run_id?: string; step?: number };
  state: MemoryState;
  /** 0..1 now; retired below 0.05. */
  strength: number;
  recalls: number;
  supersedes?: string;
  superseded_by?: string;
  created_at: string;
  updated_at: string;
  last_recalled_at?: string;
};

/** What POST …/memories did: stored a new memory (maybe replacing one) or reinforced an existing one. */
export type Remembered = { memory: Memory; superseded?: Memory; reason?: string; existing?: boolean };

export type MemoryQuery = { q?: string; retired?: boolean; limit?: number };

/** Under this a memory is retired (the server's Floor). */
export const RETIRED_BELOW = 0.05;

export type StrengthLevel = 'strong' | 'fading' | 'weak' | 'retired';

export function strengthLevel(s: number): StrengthLevel {
  if (!(s >= RETIRED_BELOW)) return 'retired';
  if (s >= 0.6) return 'strong';
  if (s >= 0.25) return 'fading';
  return 'weak';
}

const COLOURS: Record<StrengthLevel, string> = {
  strong: 'var(--success)',
  fading: 'var(--warning)',
  weak: 'var(--danger)',
  retired: 'var(--faint)',
};

const LABELS: Record<StrengthLevel, string> = {
  strong: 'Strong',
  fading: 'Fading',
  weak: 'Weak',
  retired: 'Retired',
};

/** The bar's colour: a CSS colour (theme variable). */
export function strengthColour(s: number): string {
  return COLOURS[strengthLevel(s)];
}

/** "Strong · 100%", "Fading · 42%". */
export function strengthLabel(s: number): string {
  const pct = Math.round(Math.min(1, Math.max(0, Number.isFinite(s) ? s : 0)) * 100);
  return `${LABELS[strengthLevel(s)]} · ${pct}%`;
}

/** The bar's width in percent, clamped to 0..100 (a retired one still shows a sliver). */
export function strengthWidth(s: number): number {
  if (!Number.isFinite(s)) return 0;
  return Math.round(Math.min(1, Math.max(0, s)) * 1000) / 10;
}

/** "just now", "5 min ago", "3 h ago", "yesterday", "12 days ago", else a date. */
export function ago(iso: string | null | undefined, now = new Date()): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const s = Math.max(0, (now.getTime() - d.getTime()) / 1000);
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  const days = Math.floor(s / 86400);
  if (days === 1) return 'yesterday';
  if (days < 45) return `${days} days ago`;
  return d.toLocaleDateString([], { day: 'numeric', month: 'short', year: 'numeric' });
}

/**
 * Why a memory is as strong as it is: how often it was used (the agent
 * recalled it or cited it in a run, or you marked it useful) and when last.
 * "Used 3 times · last 2 days ago", "Not used yet".
 */
export function recallLine(m: Pick<Memory, 'recalls' | 'last_recalled_at'>, now = new Date()): string {
  if (!m.recalls) return 'Not used yet';
  const times = m.recalls === 1 ? 'once' : `${m.recalls} times`;
  const last = ago(m.last_recalled_at, now);
  return `Used ${times}${last ? ` · last ${last}` : ''}`;
}

/** What the server did with a memory added by hand, for a person. */
export function rememberedNote(r: { existing?: boolean; superseded?: Memory; candidate?: Memory; reason?: string }): string {
  if (r.superseded) return `Replaced an older memory: “${clip(r.superseded.text, 80)}”.`;
  if (r.existing) return 'Already remembered: the existing memory was reinforced instead.';
  if (r.candidate) {
    return `Kept both: it is close to “${clip(r.candidate.text, 80)}”. If it corrects that one, use Correct… on it instead.`;
  }
  return '';
}

export function clip(s: string, n: number): string {
  return s.length <= n ? s : s.slice(0, n - 1).trimEnd() + '…';
}
