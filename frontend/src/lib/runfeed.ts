// Run events from the one event stream, for the views of one agent's runs
// (chat, monitoring, logs), changes of its memories and skills, and of what waits
// for a person (pauses, notifications, variables, delivery settings), and of its
// schedules, triggers, installed apps, browsers and templates. App feeds
// it; components subscribe while shown.
import type { ChangeEvent, DeltaEvent } from './events';

export type RunFeedListener = {
  /** A run.* change (a run was created, updated, or got a step). */
  change?: (ev: ChangeEvent) => void;
  delta?: (ev: DeltaEvent) => void;
  /** The stream reconnected: events may have been missed. */
  resync?: () => void;
  /** An agent's memories or skills changed (memory.changed / skill.changed; id: the agent). */
  knowledge?: (ev: ChangeEvent) => void;
  /** Model providers were set up or forgotten in Settings → Models. */
  models?: () => void;
  /** pause.*, notification.*, variables.changed or settings.changed. */
  human?: (ev: ChangeEvent) => void;
  /** schedule.* or trigger.* (id: the schedule or trigger, agent: its agent). */
  automation?: (ev: ChangeEvent) => void;
  /** connector.* (id: the installed app, agent: its agent). */
  apps?: (ev: ChangeEvent) => void;
  /** browser.updated (agent: whose browser started, stopped, moved, or changed hands). */
  browser?: (ev: ChangeEvent) => void;
  /** template.* (id: the template). */
  templates?: (ev: ChangeEvent) => void;
  /** brain.page.* (id: the page). */
  brain?: (ev: ChangeEvent) => void;
};

/** The kinds `automation` listeners hear. */
export const isAutomationEvent = (kind: string) => kind.startsWith('schedule.') || kind.startsWith('trigger.');

/** The kinds `human` listeners hear. */
export const isHumanEvent = (kind: string) =>
  kind.startsWith('pause.') || kind.startsWith('notification.') || kind === 'variables.changed' || kind === 'settings.changed';

const listeners = new Set<RunFeedListener>();

export const runFeed = {
  /** Returns the unsubscribe. */
  subscribe(l: RunFeedListener): () => void {
    listeners.add(l);
    return () => void listeners.delete(l);
  },
  change(ev: ChangeEvent) {
    if (ev.kind === 'memory.changed' || ev.kind === 'skill.changed') {
      for (const l of listeners) l.knowledge?.(ev);
      return;
    }
    if (isHumanEvent(ev.kind)) {
      for (const l of listeners) l.human?.(ev);
      return;
    }
    if (isAutomationEvent(ev.kind)) {
      for (const l of listeners) l.automation?.(ev);
      return;
    }
    if (ev.kind.startsWith('connector.')) {
      for (const l of listeners) l.apps?.(ev);
      return;
    }
    if (ev.kind.startsWith('browser.')) {
      for (const l of listeners) l.browser?.(ev);
      return;
    }
    if (ev.kind.startsWith('brain.')) {
      for (const l of listeners) l.brain?.(ev);
      return;
    }
    if (ev.kind.startsWith('template.')) {
      for (const l of listeners) l.templates?.(ev);
      return;
    }
    if (!ev.kind.startsWith('run.')) return;
    for (const l of listeners) l.change?.(ev);
  },
  delta(ev: DeltaEvent) {
    for (const l of listeners) l.delta?.(ev);
  },
  resync() {
    for (const l of listeners) l.resync?.();
  },
  modelsChanged() {
    for (const l of listeners) l.models?.();
  },
};
