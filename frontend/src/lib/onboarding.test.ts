import { describe, expect, it } from 'vitest';
import { barMessage, opensForeman, settingsEntry, showsForeman, touchesOnboarding, type Onboarding } from './onboarding';

const base: Onboarding = {
  state: 'running', agent_id: 'ag_foreman', session_id: 's', run_id: 'r', run_status: 'paused',
  card_id: 'pau_1', stopped: false, needs_model: false, error: '',
};

describe('onboarding', () => {
  it('opens the Foreman only while its card waits', () => {
    expect(opensForeman(base)).toBe(true);
    expect(opensForeman({ ...base, card_id: '' })).toBe(false);
    expect(opensForeman({ ...base, state: 'skipped' })).toBe(false);
    expect(opensForeman(null)).toBe(false);
  });
  it('shows the Foreman once onboarding started, until it is done', () => {
    expect(showsForeman(base)).toBe(true);
    expect(showsForeman({ ...base, state: 'new' })).toBe(false);
    expect(showsForeman({ ...base, state: 'skipped' })).toBe(true);
    expect(showsForeman({ ...base, state: 'done' })).toBe(false);
  });
  it('offers to resume or run again from Settings', () => {
    expect(settingsEntry({ ...base, state: 'done' })).toBe('Run onboarding again');
    expect(settingsEntry({ ...base, state: 'skipped' })).toBe('Start onboarding');
    expect(settingsEntry({ ...base, state: 'new' })).toBe('Start onboarding');
    expect(settingsEntry({ ...base, stopped: true })).toBe('Resume onboarding');
    expect(settingsEntry(base)).toBeNull();
  });
  it('says to set up a model when none is configured', () => {
    expect(barMessage({ ...base, card_id: '', stopped: true, needs_model: true })).toContain('Settings → Models');
    expect(barMessage({ ...base, card_id: '', stopped: true, error: 'boom' })).toContain('boom');
    expect(barMessage({ ...base, state: 'done' })).toBeNull();
  });
  it('refreshes on the Foreman’s runs and cards', () => {
    expect(touchesOnboarding('onboarding.updated', undefined, 'ag_foreman')).toBe(true);
    expect(touchesOnboarding('pause.updated', 'ag_foreman', 'ag_foreman')).toBe(true);
    expect(touchesOnboarding('pause.updated', 'ag_other', 'ag_foreman')).toBe(false);
    expect(touchesOnboarding('agent.updated', 'ag_foreman', 'ag_foreman')).toBe(false);
  });
});
