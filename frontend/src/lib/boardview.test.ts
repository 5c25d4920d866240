import { describe, expect, it } from 'vitest';
import { automationLabel, clampZoom, FIT_MAX, fitZoom, hiddenEdges, scrollToShow, stepZoom, wheelZoom, ZOOM_MAX, ZOOM_MIN } from './boardview';

describe('zoom', () => {
  it('steps through fixed levels and stops at the ends', () => {
    expect(stepZoom(1, 1)).toBe(1.1);
    expect(stepZoom(1, -1)).toBe(0.9);
    expect(stepZoom(1.03, -1)).toBe(1);
    expect(stepZoom(ZOOM_MAX, 1)).toBe(ZOOM_MAX);
    expect(stepZoom(ZOOM_MIN, -1)).toBe(ZOOM_MIN);
  });
  it('clamps, and treats nonsense as 100 %', () => {
    expect(clampZoom(9)).toBe(ZOOM_MAX);
    expect(clampZoom(0)).toBe(ZOOM_MIN);
    expect(clampZoom(NaN)).toBe(1);
  });
  it('wheels in for a negative delta, out for a positive one', () => {
    expect(wheelZoom(1, -100)).toBeGreaterThan(1);
    expect(wheelZoom(1, 100)).toBeLessThan(1);
    expect(wheelZoom(1, 100000)).toBe(ZOOM_MIN);
  });
  it('fits a big board into the view, and does not blow up a small one', () => {
    const z = fitZoom(2000, 1000, 1096, 800);
    expect(2000 * z).toBeLessThanOrEqual(1096 - 96);
    expect(1000 * z).toBeLessThanOrEqual(800 - 144);
    expect(fitZoom(100, 100, 1920, 1080)).toBe(FIT_MAX);
    expect(fitZoom(0, 0, 100, 100)).toBe(1);
  });
});

describe('scrollToShow', () => {
  const view = { left: 0, top: 0, right: 800, bottom: 600 };
  it('leaves a target in view alone', () => {
    expect(scrollToShow({ left: 100, top: 100, right: 200, bottom: 200 }, view)).toEqual({ dx: 0, dy: 0 });
  });
  it('scrolls the least that brings it in, with padding', () => {
    expect(scrollToShow({ left: 900, top: 100, right: 950, bottom: 150 }, view)).toEqual({ dx: 174, dy: 0 });
    expect(scrollToShow({ left: -50, top: -80, right: 0, bottom: -30 }, view)).toEqual({ dx: -74, dy: -104 });
  });
  it('shows the start of a target bigger than the view', () => {
    expect(scrollToShow({ left: 100, top: 0, right: 2000, bottom: 10 }, view, 10).dx).toBe(90);
  });
});

describe('hiddenEdges', () => {
  it('says which sides hide more', () => {
    expect(hiddenEdges({ scrollLeft: 0, scrollTop: 0, scrollWidth: 800, scrollHeight: 600, clientWidth: 800, clientHeight: 600 })).toEqual({
      left: false,
      top: false,
      right: false,
      bottom: false,
    });
    expect(hiddenEdges({ scrollLeft: 10, scrollTop: 0, scrollWidth: 1200, scrollHeight: 900, clientWidth: 800, clientHeight: 600 })).toEqual({
      left: true,
      top: false,
      right: true,
      bottom: true,
    });
  });
});

describe('automationLabel', () => {
  it('says how many and which are paused', () => {
    expect(automationLabel(2, 0, 'scheduled task')).toBe('2 scheduled tasks');
    expect(automationLabel(1, 1, 'scheduled task')).toBe('1 scheduled task, paused');
    expect(automationLabel(2, 2, 'webhook trigger')).toBe('2 webhook triggers, all paused');
    expect(automationLabel(3, 1, 'webhook trigger')).toBe('3 webhook triggers (1 paused)');
  });
});
