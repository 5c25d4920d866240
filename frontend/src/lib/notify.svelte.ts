// Toasts for new notifications, when the delivery settings say "in app" for
// their kind and origin. Fed by the event stream (App).
import { api } from './api';
import { showsToast } from './notifications';
import { toasts, type ToastKind } from './toasts.svelte';
import type { ChangeEvent } from './events';
import type { Delivery, Notification, NotificationKind } from './notificationtypes';

const TOAST: Partial<Record<NotificationKind, ToastKind>> = { error: 'error', done: 'success' };

export class NotificationToasts {
  private delivery: Promise<Delivery | null> | null = null;
  private deliveryWs = '';
  private seen = new Set<string>();

  /** The workspace's delivery settings, fetched once (and again after settings.changed). */
  private deliveryOf(wsId: string): Promise<Delivery | null> {
    if (!this.delivery || this.deliveryWs !== wsId) {
      this.deliveryWs = wsId;
      this.delivery = api.getDelivery(wsId).catch(() => null);
    }
    return this.delivery;
  }

  /**
   * Reacts to one event of the stream for the workspace shown; agentName names
   * the sender; quiet says a notification is on screen already (no toast).
   */
  async onChange(ev: ChangeEvent, wsId: string, agentName: (id: string) => string, quiet?: (n: Notification) => boolean) {
    if (ev.workspace !== wsId) return;
    if (ev.kind === 'settings.changed') {
      this.delivery = null;
      await this.deliveryOf(wsId);
      return;
    }
    if (ev.kind !== 'notification.created' || !ev.id || this.seen.has(ev.id)) return;
    this.seen.add(ev.id);
    const [delivery, list] = await Promise.all([
      this.deliveryOf(wsId),
      api.listNotifications(wsId, { agent_id: ev.agent, limit: 20 }),
    ]);
    const n = list.find((x) => x.id === ev.id);
    if (!n || n.handled_at || !showsToast(delivery, n) || quiet?.(n)) return;
    const who = agentName(n.agent_id);
    toasts.push(TOAST[n.kind] ?? 'info', who ? `${who}: ${n.title}` : n.title);
  }
}

export const notificationToasts = new NotificationToasts();
