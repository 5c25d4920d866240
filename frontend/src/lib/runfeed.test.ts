import { describe, expect, it } from 'vitest';
import { isAutomationEvent, isHumanEvent, runFeed } from './runfeed';
import type { ChangeEvent } from './events';

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

  it('sends schedule and trigger events to automation listeners only', () => {
    const got: string[] = [];
    const off = runFeed.subscribe({ change: (ev) => got.push(`change ${ev.kind}`), automation: (ev) => got.push(`automation ${ev.kind} ${ev.id}`) });
    for (const k of ['schedule.created', 'schedule.fired', 'trigger.delivery', 'run.created']) runFeed.change({ workspace: 'ws_1', kind: k, id: 'x_1', agent: 'ag_1' });
    off();
    expect(got).toEqual(['automation schedule.created x_1', 'automation schedule.fired x_1', 'automation trigger.delivery x_1', 'change run.created']);
    expect(isAutomationEvent('pause.created')).toBe(false);
  });

  it('sends template events to template listeners only', () => {
    const got: string[] = [];
    const off = runFeed.subscribe({ change: (ev) => got.push(`change ${ev.kind}`), templates: (ev) => got.push(`templates ${ev.kind} ${ev.id}`) });
    for (const k of ['template.created', 'template.deleted', 'run.created']) runFeed.change({ workspace: 'ws_1', kind: k, id: 'tp_1' });
    off();
    expect(got).toEqual(['templates template.created tp_1', 'templates template.deleted tp_1', 'change run.created']);
  });
});
