// What the last update check found, for the top bar's pill and About Rerun:
// read on load, and again when the server says a check ended
// (update.checked) or the event stream missed something.
import { api } from './api';
import type { LastUpdate } from './about';
import type { ChangeEvent } from './events';

class UpdatesState {
  last = $state<LastUpdate | null>(null);

  /** Reads GET /api/update/last (no network on the server's side). */
  async load() {
    this.last = await api.lastUpdate();
  }

  onChange(ev: ChangeEvent) {
    if (ev.kind === 'update.checked') void this.load().catch(() => {});
  }
}

export const updates = new UpdatesState();
