// The agent panel's width: dragged by its left edge, remembered across starts.

export const PANEL_MIN = 380;
export const PANEL_DEFAULT = 480;
/** The board keeps at least this much room beside the panel. */
export const BOARD_MIN = 320;
const KEY = 'rerun.panelWidth';

/** A width the panel may take in a window `viewport` px wide. */
export function clampPanelWidth(width: number, viewport: number): number {
  const max = Math.max(PANEL_MIN, viewport - BOARD_MIN);
  if (!Number.isFinite(width)) return Math.min(PANEL_DEFAULT, max);
  return Math.round(Math.min(Math.max(width, PANEL_MIN), max));
}

/** The stored width, or the default when none (or nonsense) is stored. */
export function storedPanelWidth(storage: Pick<Storage, 'getItem'> | undefined): number {
  const raw = storage?.getItem(KEY);
  const n = raw == null ? NaN : Number(raw);
  return Number.isFinite(n) && n > 0 ? n : PANEL_DEFAULT;
}

export function storePanelWidth(storage: Pick<Storage, 'setItem'> | undefined, width: number) {
  try {
    storage?.setItem(KEY, String(Math.round(width)));
  } catch {
    // private mode or full: the width is kept for this page only
  }
}

/** Sets the CSS variable the panel, the board and the toasts read. */
export function applyPanelWidth(width: number) {
  document.documentElement.style.setProperty('--panel-width', `min(${Math.round(width)}px, 100vw)`);
}
