// The current workspace's relay link, kept fresh by relay.status events: the
// workspace pill and the Relay dialog read it.
import { api } from './api';
import type { RelayStatus } from './relay';

class RelayState {
  wsId = $state('');
  status = $state<RelayStatus | null>(null);

  /** Loads the status of workspace wsId (again). */
  async load(wsId: string) {
    this.wsId = wsId;
    const s = await api.relayStatus(wsId);
    if (this.wsId === wsId) this.status = s;
  }

  /** Refetches on a relay.status change of the shown workspace. */
  onChange(ev: { workspace: string; kind: string }) {
    if (ev.kind === 'relay.status' && ev.workspace === this.wsId) void this.load(this.wsId).catch(() => {});
  }
}

export const relay = new RelayState();
