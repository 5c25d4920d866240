// How the board is viewed: zoom steps, fit to screen, keeping a spot in view,
// and the words for an agent's automation badges. No DOM, no Svelte.

export const ZOOM_MIN = 0.3;
export const ZOOM_MAX = 2;
/** Fit to screen never blows a small board up past this. */
export const FIT_MAX = 1.25;
const STEPS = [0.3, 0.4, 0.5, 0.67, 0.8, 0.9, 1, 1.1, 1.25, 1.5, 1.75, 2];

export function clampZoom(z: number): number {
  if (!Number.isFinite(z)) return 1;
  return Math.min(ZOOM_MAX, Math.max(ZOOM_MIN, z));
}

/** The next zoom step in (dir 1) or out (dir -1) from z. */
export function stepZoom(z: number, dir: 1 | -1): number {
  if (dir > 0) return STEPS.find((s) => s > z + 0.001) ?? ZOOM_MAX;
  return [...STEPS].reverse().find((s) => s < z - 0.001) ?? ZOOM_MIN;
}

/** A wheel's or pinch's zoom: smooth, by how far it turned (deltaY in pixels). */
export function wheelZoom(z: number, deltaY: number): number {
  return clampZoom(z * Math.exp(-deltaY / 300));
}

/** The zoom at which a drawing (w × h) fits the view (vw × vh) minus a margin on each side. */
export function fitZoom(w: number, h: number, vw: number, vh: number, margin = { x: 48, y: 72 }): number {
  if (w <= 0 || h <= 0) return 1;
  const z = Math.min((vw - 2 * margin.x) / w, (vh - 2 * margin.y) / h);
  return clampZoom(Math.min(FIT_MAX, z));
}

type Rect = { left: number; top: number; right: number; bottom: number };

/**
 * How far to scroll (dx, dy) so `target` lies inside `view` with `pad` to spare;
 * zero on an axis where it already does. Bigger than the view: its start shows.
 */
export function scrollToShow(target: Rect, view: Rect, pad = 24): { dx: number; dy: number } {
  const axis = (a0: number, a1: number, v0: number, v1: number) => {
    if (a1 - a0 > v1 - v0 - 2 * pad) return a0 - v0 - pad;
    if (a0 < v0 + pad) return a0 - v0 - pad;
    if (a1 > v1 - pad) return a1 - v1 + pad;
    return 0;
  };
  return { dx: axis(target.left, target.right, view.left, view.right), dy: axis(target.top, target.bottom, view.top, view.bottom) };
}

/** Which edges of a scrolled area hide more of it. */
export function hiddenEdges(s: { scrollLeft: number; scrollTop: number; scrollWidth: number; scrollHeight: number; clientWidth: number; clientHeight: number }) {
  return {
    left: s.scrollLeft > 1,
    top: s.scrollTop > 1,
    right: s.scrollLeft + s.clientWidth < s.scrollWidth - 1,
    bottom: s.scrollTop + s.clientHeight < s.scrollHeight - 1,
  };
}

/** "2 scheduled tasks", "1 scheduled task, paused", "3 webhook triggers (1 paused)". */
export function automationLabel(n: number, paused: number, one: string): string {
  const words = `${n} ${one}${n === 1 ? '' : 's'}`;
  if (paused <= 0) return words;
  if (paused >= n) return n === 1 ? `${words}, paused` : `${words}, all paused`;
  return `${words} (${paused} paused)`;
}
