import { describe, expect, it } from 'vitest';
import { hostError, hostsError, hostsSummary, nameError, normalizeName, reference, splitHosts, valueError } from './variables';

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

describe('variable hosts', () => {
  it('splits what is typed at commas, spaces and lines, lower case, each once', () => {
    expect(splitHosts(' API.github.com, *.githubusercontent.com\napi.github.com.  ')).toEqual(['api.github.com', '*.githubusercontent.com']);
    expect(splitHosts('  ,, ')).toEqual([]);
  });

  it('takes exact hosts, IP addresses and *.domain wildcards', () => {
    for (const h of ['api.github.com', '*.example.com', 'localhost', '127.0.0.1', '::1', '[::1]']) expect(hostError(h)).toBe('');
  });

  it('says what to write instead of a URL, a port or a wildcard too wide', () => {
    expect(hostError('https://api.github.com/repos')).toBe('Write the host alone (api.github.com), without scheme, path or user.');
    expect(hostError('api.github.com/x')).toMatch(/\(api\.github\.com\)/);
    expect(hostError('api.github.com:443')).toMatch(/without the port/);
    expect(hostError('*')).toMatch(/empty to allow every host/);
    expect(hostError('*.com')).toMatch(/top-level domain/);
    expect(hostError('api.*.com')).toMatch(/not a host name/);
    expect(hostError('bad host')).toMatch(/not a host name/);
    expect(hostsError('api.github.com, https://x.example/')).toMatch(/x\.example/);
    expect(hostsError('')).toBe('');
    expect(hostsError(Array.from({ length: 33 }, (_, i) => `h${i}.example.com`).join(','))).toMatch(/at most 32/);
  });

  it('sums up where a value may go', () => {
    expect(hostsSummary([])).toBe('Sent to any host');
    expect(hostsSummary(undefined)).toBe('Sent to any host');
    expect(hostsSummary(['api.github.com', '*.github.com'])).toBe('Only sent to api.github.com, *.github.com');
  });
});
