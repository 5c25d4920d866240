// Progress of the background re-embedding of memories (after the embedding
// model changed), from `memory.reembed` change events with `text: "done/total"`.
// Pure: the timers live in reembed.svelte.ts.

export type ReembedProgress = { done: number; total: number };

/** How long a finished bar stays up, so "40 / 40" can be seen. */
export const LINGER_MS = 4000;
/** With no news for this long, a re-embed that stopped half way (a failed batch) is hidden. */
export const STALL_MS = 120_000;

const MAX = 1e9;

/** Parses "12/40"; undefined for anything malformed (done > total, total 0, not whole numbers). */
export function parseReembed(text: unknown): ReembedProgress | undefined {
  if (typeof text !== 'string') return undefined;
  const m = /^\s*(\d{1,10})\s*\/\s*(\d{1,10})\s*$/.exec(text);
  if (!m) return undefined;
  const done = Number(m[1]);
  const total = Number(m[2]);
  if (!Number.isSafeInteger(done) || !Number.isSafeInteger(total)) return undefined;
  if (total <= 0 || total > MAX || done > total) return undefined;
  return { done, total };
}

/**
 * Folds an update into the shown progress. Within one re-embed (same total)
 * progress never goes back: a late, out-of-order update keeps the max. A
 * different total is a new re-embed and replaces the old one.
 */
export function mergeReembed(prev: ReembedProgress | undefined, next: ReembedProgress): ReembedProgress {
  if (!prev || prev.total !== next.total) return next;
  return next.done > prev.done ? next : prev;
}

export function isDone(p: ReembedProgress): boolean {
  return p.done >= p.total;
}

/** 0..100, whole. */
export function percent(p: ReembedProgress): number {
  return p.total > 0 ? Math.min(100, Math.round((p.done / p.total) * 100)) : 0;
}

/** "12 / 40". */
export function countLabel(p: ReembedProgress): string {
  return `${p.done.toLocaleString()} / ${p.total.toLocaleString()}`;
}
