import { describe, expect, it } from 'vitest';
import { newlyPaired, phoneLine, timeLeft, type Phone } from './phone';

const t0 = Date.parse('2026-12-02T10:00:00Z');
const phone = (id: string, extra: Partial<Phone> = {}): Phone => ({ id, name: id, paired_at: '2026-12-02T09:58:00Z', ...extra });

describe('phone', () => {
  it('counts down a pairing link and says when it expired', () => {
    expect(timeLeft('2026-12-02T10:10:00Z', t0)).toBe('10:00');
    expect(timeLeft('2026-12-02T10:00:05.2Z', t0)).toBe('0:06');
    expect(timeLeft('2026-12-02T10:00:00Z', t0)).toBe('');
    expect(timeLeft('not a time', t0)).toBe('');
  });

  it('finds the phone just paired', () => {
    expect(newlyPaired([phone('ph_a')], [phone('ph_a'), phone('ph_b')]).map((p) => p.id)).toEqual(['ph_b']);
    expect(newlyPaired([phone('ph_a')], [])).toEqual([]);
  });

  it('describes a phone', () => {
    expect(phoneLine(phone('ph_a'), t0)).toBe('paired 2 min ago');
    expect(phoneLine(phone('ph_a', { paired_at: '2026-11-30T10:00:00Z', last_push_at: '2026-12-02T09:59:50Z' }), t0)).toBe(
      'paired 2 d ago · last notification just now',
    );
  });
});
