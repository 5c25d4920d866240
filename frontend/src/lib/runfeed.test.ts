import { describe, expect, it } from 'vitest';
import { isHumanEvent, runFeed } from './runfeed';
import type { ChangeEvent } from './types';

describe('runFeed', () => {
  it('sends pauses, notifications, variables and settings to human listeners, runs to change listeners', () => {
    const got: string[] = [];
    const off = runFeed.subscribe({ change: (ev) => got.push(`change ${ev.kind}`), human: (ev) => got.push(`human ${ev.kind}`) });
    const ev = (kind: string): ChangeEvent => ({ workspace: 'ws_1', kind });
    for (const k of ['run.updated', 'pause.created', 'notification.updated', 'variables.changed', 'settings.changed', 'agent.updated']) runFeed.change(ev(k));
    off();
    runFeed.change(ev('pause.updated'));
    expect(got).toEqual(['change run.updated', 'human pause.created', 'human notification.updated', 'human variables.changed', 'human settings.changed']);
    expect(isHumanEvent('memory.changed')).toBe(false);
  });
});
