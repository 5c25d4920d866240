// The shown re-embed progress: fed by App from the event stream, read by the
// toolbar chip and the Memory tab. Hidden LINGER_MS after it completes, or when
// no update came for STALL_MS (a re-embed that failed half way sends no more).
import { LINGER_MS, STALL_MS, isDone, mergeReembed, parseReembed, type ReembedProgress } from './reembed';
import type { ChangeEvent } from './events';

export class ReembedState {
  /** The workspace the progress belongs to. */
  workspace = $state('');
  progress = $state<ReembedProgress | undefined>(undefined);
  private timer: ReturnType<typeof setTimeout> | undefined;

  /** Progress for `ws`, if a re-embed runs (or just finished) there. */
  of(ws: string): ReembedProgress | undefined {
    return this.workspace === ws ? this.progress : undefined;
  }

  /** Takes one event; ignores anything but a well-formed memory.reembed. */
  onChange(ev: ChangeEvent) {
    if (ev.kind !== 'memory.reembed') return;
    const next = parseReembed(ev.text);
    if (!next) return;
    const prev = this.workspace === ev.workspace ? this.progress : undefined;
    this.workspace = ev.workspace;
    this.progress = mergeReembed(prev, next);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.clear(), isDone(this.progress) ? LINGER_MS : STALL_MS);
  }

  clear() {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.progress = undefined;
    this.workspace = '';
  }
}

export const reembed = new ReembedState();
