// What waits for a person from one agent: its open pauses and notifications
// (the To handle tab and its count), kept fresh by the event stream.
import { api } from './api';
import { coalesce } from './coalesce';
import { inbox, type InboxEntry } from './notifications';
import type { ChangeEvent } from './events';
import type { Notification } from './notificationtypes';
import type { Pause } from './pausetypes';

export class InboxState {
  notifications = $state<Notification[]>([]);
  pauses = $state<Pause[]>([]);
  loaded = $state(false);
  error = $state('');

  lists = $derived(inbox(this.notifications, this.pauses));
  count = $derived(this.lists.open.length);

  readonly wsId: string;
  readonly agentId: string;

  constructor(wsId: string, agentId: string) {
    this.wsId = wsId;
    this.agentId = agentId;
  }

  /** Refetches both lists; a failure is kept in `error`. */
  load = coalesce(async () => {
    try {
      const [notifications, pauses] = await Promise.all([
        api.listNotifications(this.wsId, { agent_id: this.agentId, limit: 100 }),
        api.listPauses(this.wsId, { agent_id: this.agentId, status: 'open' }),
      ]);
      this.notifications = notifications;
      this.pauses = pauses;
      this.error = '';
    } catch (err) {
      this.error = err instanceof Error ? err.message : String(err);
    } finally {
      this.loaded = true;
    }
  });

  onHuman(ev: ChangeEvent) {
    if (ev.workspace !== this.wsId || ev.agent !== this.agentId) return;
    if (ev.kind.startsWith('pause.') || ev.kind.startsWith('notification.')) void this.load();
  }

  /** Dismisses a notification, or closes a pause's card without answering it. */
  async dismiss(entry: InboxEntry) {
    if (entry.pause) await api.answerPause(this.wsId, entry.pause.id, { dismiss: true });
    else if (entry.notification) await api.dismissNotification(this.wsId, entry.notification.id);
    await this.load();
  }

  /** Dismisses every open notification of the agent (pauses wait for an answer). */
  async dismissAll() {
    await api.dismissAllNotifications(this.wsId, this.agentId);
    await this.load();
  }
}
