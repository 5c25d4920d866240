import { describe, expect, it } from 'vitest';
import { authorLabel, draftChanged, draftProblem, versionDiff, versionLine } from './brain';
import { diffLines, diffStats } from './diff';
import type { BrainVersion } from './brain';

const v = (version: number, title: string, author: string, body = ''): BrainVersion => ({
  version,
  title,
  summary: '',
  body,
  author,
  created_at: '2026-01-01T00:00:00Z',
});

describe('authorLabel', () => {
  it.each([
    ['person', 'you'],
    ['foreman', 'the Foreman'],
    ['agent:@scout', '@scout'],
  ])('%s → %s', (a, want) => expect(authorLabel(a)).toBe(want));
});

describe('versionDiff', () => {
  it('marks added and removed lines in one hunk', () => {
    const d = versionDiff('Bikes.\nRepairs.\n', 'Bikes.\nRentals.\n', 'v1', 'v2');
    expect(d.split('\n')).toEqual(['--- v1', '+++ v2', '@@ -1,2 +1,2 @@', ' Bikes.', '-Repairs.', '+Rentals.']);
    expect(diffStats(diffLines(d))).toEqual({ added: 1, removed: 1 });
  });
  it('has no hunk when nothing changed', () => {
    expect(versionDiff('Same', 'Same', 'v1', 'v2')).toBe('--- v1\n+++ v2');
  });
  it('shows a first version as all added', () => {
    expect(versionDiff('', 'A\nB', '(none)', 'v1')).toContain('@@ -0,0 +1,2 @@\n+A\n+B');
  });
});

describe('versionLine', () => {
  const vs = [v(3, 'Offer', 'agent:@scout'), v(2, 'Offer', 'person'), v(1, 'What we sell', 'foreman')];
  it.each([
    [0, 'edited by @scout'],
    [1, 'renamed from “What we sell” by you'],
    [2, 'created by the Foreman'],
  ])('version at %i', (i, want) => expect(versionLine(vs, vs[i]!)).toBe(want));
});

describe('draftProblem', () => {
  const ok = { title: 'Tone', summary: '', body: 'Warm.' };
  it('accepts a good draft', () => expect(draftProblem(ok)).toBe(''));
  it.each([
    [{ ...ok, title: '  ' }, 'Give the page a title'],
    [{ ...ok, title: 'x'.repeat(121) }, 'keep it to 120'],
    [{ ...ok, summary: 'é'.repeat(301) }, 'keep it to 300'],
    [{ ...ok, body: 'é'.repeat(33 * 1024) }, 'keep it to 64 KiB'],
  ])('refuses %#', (d, want) => expect(draftProblem(d)).toContain(want));
  it('counts a change only when something differs', () => {
    expect(draftChanged({ ...ok, title: ' Tone ' }, ok)).toBe(false);
    expect(draftChanged({ ...ok, body: 'Warm!' }, ok)).toBe(true);
  });
});
