// One agent's schedules and triggers (the Automations tab), with the next fire
// times, the histories and deliveries a person opened, and the whole URLs shown
// once after a create or a rotation; kept fresh by the event stream.
import { api } from './api';
import { coalesce } from './coalesce';
import { reportError } from './toasts.svelte';
import type { Fire, Schedule, ScheduleInput, Trigger, TriggerDelivery, TriggerInput } from './automations';
import type { ChangeEvent } from './events';

export class AutomationsState {
  schedules = $state<Schedule[]>([]);
  triggers = $state<Trigger[]>([]);
  /** The next fire times (RFC 3339) of each enabled schedule. */
  next = $state<Record<string, string[]>>({});
  /** Fires of the schedules whose history is open, newest first. */
  history = $state<Record<string, Fire[]>>({});
  /** Deliveries of the triggers whose list is open, newest first. */
  deliveries = $state<Record<string, TriggerDelivery[]>>({});
  /** Whole URLs just made (create, rotate), by trigger id: in memory only, shown once. */
  urls = $state<Record<string, string>>({});
  /** The same, through the workspace's relay (when linked): also shown once. */
  publicUrls = $state<Record<string, string>>({});
  /** Schedules and triggers with an action on its way (their buttons wait). */
  busy = $state<Record<string, boolean>>({});
  loaded = $state(false);
  error = $state('');

  readonly wsId: string;
  readonly agentId: string;

  constructor(wsId: string, agentId: string) {
    this.wsId = wsId;
    this.agentId = agentId;
  }

  /** Refetches both lists and the next fire times; a failure is kept in `error`. */
  load = coalesce(async () => {
    try {
      const [schedules, triggers] = await Promise.all([
        api.listSchedules(this.wsId, this.agentId),
        api.listTriggers(this.wsId, this.agentId),
      ]);
      const next = await Promise.all(schedules.map((s) => this.nextOf(s)));
      this.schedules = schedules;
      this.triggers = triggers;
      this.next = Object.fromEntries(schedules.map((s, i) => [s.id, next[i]!]));
      this.error = '';
    } catch (err) {
      this.error = err instanceof Error ? err.message : String(err);
    } finally {
      this.loaded = true;
    }
  });

  private async nextOf(s: Schedule): Promise<string[]> {
    if (!s.enabled || !s.next_fire_at) return [];
    try {
      return await api.nextFires(this.wsId, s.id, 5);
    } catch {
      return [s.next_fire_at];
    }
  }

  /** Runs an action on one schedule or trigger; a failure becomes a toast saying `what`. */
  async act(id: string, what: string, fn: () => Promise<unknown>) {
    this.busy[id] = true;
    try {
      await fn();
    } catch (err) {
      reportError(err, what);
    } finally {
      delete this.busy[id];
    }
  }

  onEvent(ev: ChangeEvent) {
    if (ev.workspace !== this.wsId || (ev.agent && ev.agent !== this.agentId)) return;
    const id = ev.id;
    if (ev.kind.startsWith('schedule.')) {
      // A fire moves the next time too (and ends a one-off).
      void this.load();
      if (!id || !(id in this.history)) return;
      // Deleted (here or in another window, maybe before our own delete
      // call answered): its history goes with it.
      if (ev.kind === 'schedule.deleted') this.closeHistory(id);
      else void this.loadHistory(id).catch(() => this.closeHistory(id));
    } else if (ev.kind.startsWith('trigger.')) {
      if (ev.kind !== 'trigger.delivery') void this.load();
      if (!id || !(id in this.deliveries)) return;
      if (ev.kind === 'trigger.deleted') this.closeDeliveries(id);
      else void this.loadDeliveries(id).catch(() => this.closeDeliveries(id));
    }
  }

  async loadHistory(id: string) {
    this.history[id] = await api.scheduleHistory(this.wsId, id, 50);
  }

  closeHistory(id: string) {
    delete this.history[id];
  }

  async loadDeliveries(id: string) {
    this.deliveries[id] = await api.triggerDeliveries(this.wsId, id, 50);
  }

  closeDeliveries(id: string) {
    delete this.deliveries[id];
  }

  // ---- schedules ----

  async saveSchedule(input: ScheduleInput, id?: string): Promise<Schedule> {
    const s = id
      ? await api.updateSchedule(this.wsId, id, input)
      : await api.createSchedule(this.wsId, this.agentId, input);
    this.schedules = put(this.schedules, s);
    await this.load();
    return s;
  }

  async setScheduleEnabled(s: Schedule, enabled: boolean) {
    this.schedules = put(this.schedules, await api.updateSchedule(this.wsId, s.id, { enabled }));
    await this.load();
  }

  /** "Run now"; opens the schedule's history to show the fire. */
  async runNow(s: Schedule): Promise<Fire> {
    const fire = await api.runSchedule(this.wsId, s.id);
    await this.loadHistory(s.id);
    return fire;
  }

  async deleteSchedule(s: Schedule) {
    await api.deleteSchedule(this.wsId, s.id);
    this.schedules = this.schedules.filter((x) => x.id !== s.id);
    this.closeHistory(s.id);
  }


  // ---- triggers ----

  async createTrigger(input: TriggerInput): Promise<Trigger> {
    const made = await api.createTrigger(this.wsId, this.agentId, input);
    this.urls[made.trigger.id] = made.url;
    if (made.public_url) this.publicUrls[made.trigger.id] = made.public_url;
    this.triggers = put(this.triggers, made.trigger);
    await this.load();
    return made.trigger;
  }

  async updateTrigger(t: Trigger, patch: Partial<TriggerInput>): Promise<Trigger> {
    const saved = await api.updateTrigger(this.wsId, t.id, patch);
    this.triggers = put(this.triggers, saved);
    await this.load();
    return saved;
  }

  /** A new URL (shown once); the old one stops now or after the grace period. */
  async rotate(t: Trigger, graceSeconds: number) {
    const made = await api.rotateTrigger(this.wsId, t.id, graceSeconds);
    this.urls[t.id] = made.url;
    if (made.public_url) this.publicUrls[t.id] = made.public_url;
    this.triggers = put(this.triggers, made.trigger);
  }

  /** Forgets a whole URL once the person is done with it. */
  hideUrl(id: string) {
    delete this.urls[id];
    delete this.publicUrls[id];
  }

  /** Fires a test delivery and opens the trigger's deliveries to show it. */
  async test(t: Trigger, payload: string, contentType: string): Promise<TriggerDelivery> {
    const d = await api.testTrigger(this.wsId, t.id, payload, contentType);
    await this.loadDeliveries(t.id);
    return d;
  }

  async deleteTrigger(t: Trigger) {
    await api.deleteTrigger(this.wsId, t.id);
    this.triggers = this.triggers.filter((x) => x.id !== t.id);
    this.closeDeliveries(t.id);
    this.hideUrl(t.id);
  }
}

/** The list with `item` in place of the one with its id, or appended. */
function put<T extends { id: string }>(list: T[], item: T): T[] {
  return list.some((x) => x.id === item.id) ? list.map((x) => (x.id === item.id ? item : x)) : [...list, item];
}
