import { describe, expect, it } from 'vitest';
import { ago, recallLine, rememberedNote, strengthColour, strengthLabel, strengthLevel, strengthWidth } from './memory';
import type { Memory } from './memory';

describe('strength', () => {
  it('has levels with colours', () => {
    expect(strengthLevel(1)).toBe('strong');
    expect(strengthLevel(0.6)).toBe('strong');
    expect(strengthLevel(0.4)).toBe('fading');
    expect(strengthLevel(0.1)).toBe('weak');
    expect(strengthLevel(0.049)).toBe('retired');
    expect(strengthLevel(Number.NaN)).toBe('retired');
    expect(strengthColour(1)).toBe('var(--success)');
    expect(strengthColour(0.3)).toBe('var(--warning)');
    expect(strengthColour(0.1)).toBe('var(--danger)');
    expect(strengthColour(0)).toBe('var(--faint)');
  });

  it('labels and widths are clamped percentages', () => {
    expect(strengthLabel(1)).toBe('Strong · 100%');
    expect(strengthLabel(0.424)).toBe('Fading · 42%');
    expect(strengthLabel(0.01)).toBe('Retired · 1%');
    expect(strengthWidth(1.5)).toBe(100);
    expect(strengthWidth(-1)).toBe(0);
    expect(strengthWidth(0.5)).toBe(50);
  });
});

describe('recalls and age', () => {
  const now = new Date('2025-06-10T12:00:00Z');
  it('says how long ago', () => {
    expect(ago('2025-06-10T11:59:30Z', now)).toBe('just now');
    expect(ago('2025-06-10T11:55:00Z', now)).toBe('5 min ago');
    expect(ago('2025-06-10T09:00:00Z', now)).toBe('3 h ago');
    expect(ago('2025-06-09T10:00:00Z', now)).toBe('yesterday');
    expect(ago('2025-06-01T12:00:00Z', now)).toBe('9 days ago');
    expect(ago(undefined, now)).toBe('');
    expect(ago('garbage', now)).toBe('');
  });

  it('counts recalls', () => {
    expect(recallLine({ recalls: 0 }, now)).toBe('Not used yet');
    expect(recallLine({ recalls: 1, last_recalled_at: '2025-06-10T09:00:00Z' }, now)).toBe('Used once · last 3 h ago');
    expect(recallLine({ recalls: 4, last_recalled_at: '2025-06-08T12:00:00Z' }, now)).toBe('Used 4 times · last 2 days ago');
  });

  it('explains what adding did', () => {
    const old = { text: 'Invoices go to billing@acme.test' } as Memory;
    expect(rememberedNote({})).toBe('');
    expect(rememberedNote({ existing: true })).toMatch(/reinforced/);
    // Only on someone's word (Correct…): close text alone keeps both.
    expect(rememberedNote({ superseded: old, reason: 'explicit' })).toBe('Replaced an older memory: “Invoices go to billing@acme.test”.');
    expect(rememberedNote({ superseded: old, existing: true, reason: 'explicit' })).toMatch(/^Replaced an older memory/);
    expect(rememberedNote({ candidate: old, reason: 'near-duplicate: 67% of the words shared' })).toBe(
      'Kept both: it is close to “Invoices go to billing@acme.test”. If it corrects that one, use Correct… on it instead.',
    );
  });
});
