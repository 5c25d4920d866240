import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BUILTIN_ICONS, appIcon, brandColor, contrast, letterOf, safeIconUrl } from './appicons';

const catalogIds = [...readFileSync(new URL('../../../backend/connector/catalog.yaml', import.meta.url), 'utf8').matchAll(/^ {2}- id: (\S+)$/gm)].map(
  (m) => m[1],
);

describe('app icons', () => {
  it('maps only ids the built-in catalog has', () => {
    expect(catalogIds.length).toBeGreaterThan(30);
    const unknown = Object.keys(BUILTIN_ICONS).filter((id) => !catalogIds.includes(id));
    expect(unknown).toEqual([]);
  });

  it('gives a built-in app its bundled mark, and one simple-icons lacks its letter', () => {
    const gh = appIcon({ id: 'github', name: 'GitHub', source: 'builtin' });
    expect(gh.kind).toBe('brand');
    if (gh.kind !== 'brand') return;
    expect(gh.title).toBe('GitHub');
    expect(gh.path).toMatch(/^M/);
    expect(appIcon({ id: 'slack', name: 'Slack', source: 'builtin' })).toEqual({ kind: 'letter', letter: 'S' });
  });

  it('never gives a registry app a bundled mark by its id, only its own image', () => {
    expect(appIcon({ id: 'github', name: 'github', source: 'registry' })).toEqual({ kind: 'letter', letter: 'G' });
    expect(appIcon({ id: 'io.github.x/y', name: 'y', source: 'registry', icon: 'https://x.dev/i.png' })).toEqual({ kind: 'image', src: 'https://x.dev/i.png' });
    expect(appIcon({ id: 'io.github.x/y', name: 'y', source: 'registry', icon: 'http://x.dev/i.png' })).toEqual({ kind: 'letter', letter: 'Y' });
    // A custom server shows its letter even when it names a URL.
    expect(appIcon({ id: '', name: 'calc', source: 'custom', icon: 'https://x.dev/i.png' })).toEqual({ kind: 'letter', letter: 'C' });
  });

  it('takes https and inline images only', () => {
    const cases: [string | undefined, boolean][] = [
      ['https://example.com/icon.png', true],
      ['data:image/png;base64,iVBORw0KGgo=', true],
      ['data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=', true],
      ['http://example.com/icon.png', false],
      ['javascript:alert(1)', false],
      ['data:text/html;base64,PGgxPg==', false],
      ['data:image/svg+xml,<svg onload=alert(1)>', false],
      ['https://', false],
      ['/icon.png', false],
      ['', false],
      [undefined, false],
    ];
    for (const [src, want] of cases) expect(safeIconUrl(src), String(src)).toBe(want);
  });

  it('swaps a brand colour that all but vanishes on its tile for the text colour', () => {
    expect(contrast('#000000', '#ffffff')).toBeCloseTo(21, 5);
    expect(contrast('#777777', '#777777')).toBe(1);
    // GitHub's near-black is lost on the dark tile, fine on the light one.
    expect(brandColor('181717', '#22252c')).toBe('currentColor');
    expect(brandColor('181717', '#f6f7f9')).toBe('#181717');
    // Hugging Face's yellow the other way round.
    expect(brandColor('FFD21E', '#f6f7f9')).toBe('currentColor');
    expect(brandColor('FFD21E', '#22252c')).toBe('#ffd21e');
    // A mid colour keeps its own on both.
    expect(brandColor('635BFF', '#f6f7f9')).toBe('#635bff');
    expect(brandColor('635BFF', '#22252c')).toBe('#635bff');
    const notion = appIcon({ id: 'notion', name: 'Notion', source: 'builtin' });
    expect(notion.kind === 'brand' && [notion.light, notion.dark]).toEqual(['#000000', 'currentColor']);
  });

  it('takes the first letter of a name', () => {
    expect(letterOf('stripe')).toBe('S');
    expect(letterOf('  ärger')).toBe('Ä');
    expect(letterOf('')).toBe('?');
  });
});
