// The current workspace's onboarding, loaded from the API and refreshed by
// the event stream.
import { api } from './api';
import { reportError, toasts } from './toasts.svelte';
import { touchesOnboarding, type Onboarding } from './onboarding';
import type { ChangeEvent } from './events';

export const FOREMAN_ID = 'ag_foreman';

class OnboardingStore {
  wsId = $state('');
  value = $state<Onboarding | null>(null);

  // Loads can finish out of order (a change event right after a switch):
  // only the newest one's answer is kept.
  #loads = 0;

  async load(wsId: string) {
    this.wsId = wsId;
    const n = ++this.#loads;
    const o = await api.onboarding(wsId);
    if (wsId === this.wsId && n === this.#loads) this.value = o;
    return o;
  }

  async start() {
    const o = await api.startOnboarding(this.wsId);
    this.#loads++; // a load started before this answer is older than it
    this.value = o;
    return o;
  }

  async skip() {
    const o = await api.skipOnboarding(this.wsId);
    this.#loads++;
    this.value = o;
    return o;
  }

  /** A start or skip the person asked for is under way. */
  busy = $state(false);

  /**
   * Start (or resume, or re-run) for the person: the state it gives, or
   * null when it failed (said in a toast).
   */
  async begin(): Promise<Onboarding | null> {
    this.busy = true;
    try {
      return await this.start();
    } catch (err) {
      reportError(err, 'Could not start onboarding');
      return null;
    } finally {
      this.busy = false;
    }
  }

  /** Skip for the person, saying so (or why not) in a toast. */
  async skipNow() {
    this.busy = true;
    try {
      await this.skip();
      toasts.push('info', 'Onboarding skipped. Start it again from Settings whenever you like.', 4000);
    } catch (err) {
      reportError(err, 'Could not skip onboarding');
    } finally {
      this.busy = false;
    }
  }

  onChange(ev: ChangeEvent) {
    if (ev.workspace !== this.wsId || !touchesOnboarding(ev.kind, ev.agent, FOREMAN_ID)) return;
    void this.load(this.wsId).catch(() => {});
  }
}

export const onboarding = new OnboardingStore();
