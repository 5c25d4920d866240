import { describe, expect, it } from 'vitest';
import { figureColours, handleHue, hashString } from './palette';

describe('handleHue', () => {
  it('is stable for a handle', () => {
    expect(handleHue('ada')).toBe(handleHue('ada'));
  });
  it('stays in [0, 360)', () => {
    for (const h of ['a', 'ada', 'grace-hopper', 'x'.repeat(32)]) {
      const hue = handleHue(h);
      expect(hue).toBeGreaterThanOrEqual(0);
      expect(hue).toBeLessThan(360);
      expect(Number.isInteger(hue)).toBe(true);
    }
  });
  it('spreads different handles over different hues', () => {
    const hues = new Set(['ada', 'grace', 'linus', 'ken', 'dennis', 'barbara', 'margaret', 'alan'].map(handleHue));
    expect(hues.size).toBeGreaterThanOrEqual(7);
  });
});

describe('hashString', () => {
  it('matches FNV-1a reference values', () => {
    expect(hashString('')).toBe(0x811c9dc5);
    expect(hashString('a')).toBe(0xe40c292c);
    expect(hashString('foobar')).toBe(0xbf9cf968);
  });
});

describe('figureColours', () => {
  it('uses the handle hue in every colour', () => {
    const hue = handleHue('ada');
    for (const c of Object.values(figureColours('ada'))) expect(c.startsWith(`hsl(${hue} `)).toBe(true);
  });
});
