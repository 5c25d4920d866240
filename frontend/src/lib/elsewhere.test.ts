import { describe, expect, it } from 'vitest';
import { deviceLabel, excerpt, outcome } from './elsewhere';
import type { RunSummary } from './runs';

const summary = (p: Partial<RunSummary>): RunSummary => ({
  id: 'run_1',
  agent_id: 'ag_1',
  source: 'chat',
  status: 'done',
  input: 'Write the digest',
  output: 'Sent.',
  error: '',
  model: 'gpt-test',
  input_tokens: 10,
  output_tokens: 5,
  cost_usd: 0,
  cost_known: true,
  created_at: '2026-11-30T09:00:00Z',
  started_at: '2026-11-30T09:00:00Z',
  ended_at: '2026-11-30T09:00:04Z',
  device: 'dev_abcdefghijkl',
  ...p,
});

describe('elsewhere', () => {
  it('labels a device by the end of its id', () => {
    expect(deviceLabel('dev_abcdefghijkl')).toBe('Device ghijkl');
    expect(deviceLabel('dev_abc')).toBe('Device abc');
    expect(deviceLabel('')).toBe('Another device');
    expect(deviceLabel('dev_abcdefghijkl', 'studio-mac')).toBe('studio-mac');
  });

  it('cuts long text at a word, on one line', () => {
    expect(excerpt('short\n text')).toBe('short text');
    const long = 'word '.repeat(60);
    const got = excerpt(long, 50);
    expect(got.endsWith('…')).toBe(true);
    expect(got.length).toBeLessThanOrEqual(51);
    expect(got).not.toContain('  ');
    expect(excerpt('x'.repeat(80), 20)).toBe('x'.repeat(20) + '…');
  });

  it('shows the error of a failed run, else the output', () => {
    expect(outcome(summary({ status: 'failed', error: 'model refused', output: 'partial' }))).toBe('model refused');
    expect(outcome(summary({ status: 'failed', error: '', output: 'partial' }))).toBe('partial');
    expect(outcome(summary({ output: 'Sent.' }))).toBe('Sent.');
  });
});
