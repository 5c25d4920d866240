// The one live event stream fanned out to the page's stores: a change refreshes
// what it touches, streamed text reaches the open chat, a resync reloads them.
import { budgets } from './budgets.svelte';
import { connectEvents } from './events';
import { notificationToasts } from './notify.svelte';
import { onboarding } from './onboarding.svelte';
import { reembed } from './reembed.svelte';
import { relay } from './relay.svelte';
import { runFeed } from './runfeed';
import { reportError } from './toasts.svelte';
import { updates } from './updates.svelte';
import { workspace as ws } from './workspace.svelte';

/** Connects the app to GET /api/events; returns what stops it. */
export function connectAppEvents(): () => void {
  return connectEvents({
    onChange: (ev) => {
      void ws.onChange(ev).catch((err) => reportError(err, 'Could not refresh'));
      reembed.onChange(ev);
      budgets.onChange(ev);
      relay.onChange(ev);
      onboarding.onChange(ev);
      runFeed.change(ev);
      updates.onChange(ev);
      void notificationToasts
        .onChange(
          ev,
          ws.currentId,
          (id) => ws.agents.find((a) => a.id === id)?.name ?? '',
          // A pause of the agent whose panel is open shows as its card and tab count already.
          (n) => !!n.pause_id && n.agent_id === ws.selectedAgentId,
        )
        .catch(() => {}); // a missed toast: the bell still counts it
    },
    onDelta: (ev) => runFeed.delta(ev),
    onResync: () => {
      void ws.resync().catch((err) => reportError(err, 'Could not refresh'));
      runFeed.resync();
      budgets.resync();
      void updates.load().catch(() => {});
    },
    onStatus: (s) => (ws.stream = s),
    // A 401 signs the page out (and stops the stream); anything else: keep retrying.
    onClosed: () => void ws.refreshWorkspaces().catch(() => {}),
  });
}
