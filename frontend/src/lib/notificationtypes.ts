// Notifications as the API sends them, and the delivery matrix of Settings →
// Notifications. lib/notifications.ts reads them (the To handle list, toasts).
import type { PauseKind } from './pausetypes';

export type NotificationKind = 'info' | 'progress' | 'done' | 'error' | PauseKind;

export type Notification = {
  id: string;
  agent_id: string;
  run_id: string;
  /** '' unless raised by a pause. */
  pause_id: string;
  kind: NotificationKind;
  title: string;
  body: string;
  automated: boolean;
  created_at: string;
  /** Dismissed, or its pause answered; null = waiting. */
  handled_at: string | null;
};

export type NotificationQuery = { agent_id?: string; open?: boolean; limit?: number };

export type Channel = 'in_app' | 'os' | 'email' | 'hooks' | 'phone';

/** Runs you started in chat | runs that fired on their own. */
export type Origin = 'mine' | 'automated';

export type Delivery = Record<NotificationKind, Record<Origin, Record<Channel, boolean>>>;
