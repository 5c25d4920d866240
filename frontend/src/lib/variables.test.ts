import { describe, expect, it } from 'vitest';
import { nameError, normalizeName, reference, valueError } from './variables';

describe('variable names', () => {
  it('upper-cases what is typed and turns spaces and dashes into underscores', () => {
    expect(normalizeName('github token')).toBe('GITHUB_TOKEN');
    expect(normalizeName('stripe-key-2')).toBe('STRIPE_KEY_2');
  });

  it('accepts A-Z 0-9 _ starting with a letter, up to 64', () => {
    expect(nameError('GITHUB_TOKEN')).toBe('');
    expect(nameError('A'.repeat(64))).toBe('');
    expect(nameError('')).toMatch(/Name/);
    expect(nameError('2FA')).toMatch(/letter/);
    expect(nameError('_X')).toMatch(/letter/);
    expect(nameError('A.B')).toMatch(/A–Z/);
    expect(nameError('A'.repeat(65))).toMatch(/64/);
  });

  it('checks values are 4 bytes to 64 KiB', () => {
    expect(valueError('')).toMatch(/Enter/);
    expect(valueError('abc')).toMatch(/at least 4/);
    expect(valueError('abcd')).toBe('');
    expect(valueError('é€')).toBe(''); // 5 bytes
    expect(valueError('x'.repeat(64 * 1024 + 1))).toMatch(/64 KiB/);
  });

  it('references a variable as ${NAME}', () => {
    expect(reference('API_KEY')).toBe('${API_KEY}');
  });
});
