// Short messages in the corner. Every API error a person caused ends up here
// (or inline in the dialog they are in), never in the console only.
import { errorMessage } from './api';

export type ToastKind = 'error' | 'info' | 'success';
/** A button in the toast ("Undo"); pressing it dismisses the toast. */
export type ToastAction = { label: string; run: () => void };
export type Toast = { id: number; kind: ToastKind; text: string; action?: ToastAction };

class Toasts {
  list = $state<Toast[]>([]);
  private next = 1;

  push(kind: ToastKind, text: string, ms = kind === 'error' ? 8000 : 3500, action?: ToastAction): number {
    const id = this.next++;
    this.list = [...this.list, { id, kind, text, action }].slice(-5);
    if (ms > 0) setTimeout(() => this.dismiss(id), ms);
    return id;
  }

  dismiss(id: number) {
    this.list = this.list.filter((t) => t.id !== id);
  }
}

export const toasts = new Toasts();

/** Shows an error as a toast; `doing` says what failed ("Could not move Ada"). */
export function reportError(err: unknown, doing?: string) {
  const msg = errorMessage(err);
  toasts.push('error', doing ? `${doing}: ${msg}` : msg);
}
