// The current workspace's onboarding, loaded from the API and refreshed by
// the event stream.
import { api } from './api';
import { touchesOnboarding, type Onboarding } from './onboarding';
import type { ChangeEvent } from './types';

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

  onChange(ev: ChangeEvent) {
    if (ev.workspace !== this.wsId || !touchesOnboarding(ev.kind, ev.agent, FOREMAN_ID)) return;
    void this.load(this.wsId).catch(() => {});
  }
}

export const onboarding = new OnboardingStore();
