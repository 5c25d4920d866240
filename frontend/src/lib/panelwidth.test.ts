import { describe, expect, it } from 'vitest';
import { BOARD_MIN, clampPanelWidth, PANEL_DEFAULT, PANEL_MIN, storedPanelWidth, storePanelWidth } from './panelwidth';

function memory() {
  const m = new Map<string, string>();
  return { getItem: (k: string) => m.get(k) ?? null, setItem: (k: string, v: string) => void m.set(k, v) };
}

describe('panel width', () => {
  it('stays between the minimum and what leaves the board its room', () => {
    expect(clampPanelWidth(100, 1440)).toBe(PANEL_MIN);
    expect(clampPanelWidth(2000, 1440)).toBe(1440 - BOARD_MIN);
    expect(clampPanelWidth(612.4, 1440)).toBe(612);
  });
  it('keeps the minimum in a narrow window', () => {
    expect(clampPanelWidth(500, 600)).toBe(PANEL_MIN);
  });
  it('falls back to the default on nonsense', () => {
    expect(clampPanelWidth(NaN, 1440)).toBe(PANEL_DEFAULT);
    const s = memory();
    expect(storedPanelWidth(s)).toBe(PANEL_DEFAULT);
    s.setItem('rerun.panelWidth', 'wide');
    expect(storedPanelWidth(s)).toBe(PANEL_DEFAULT);
    expect(storedPanelWidth(undefined)).toBe(PANEL_DEFAULT);
  });
  it('remembers a stored width', () => {
    const s = memory();
    storePanelWidth(s, 640.6);
    expect(storedPanelWidth(s)).toBe(641);
  });
});
