// The Foreman's onboarding of a workspace: its state as the API answers it,
// and what the app shows for each state (pure, tested in onboarding.test.ts).

export type OnboardingState = 'new' | 'running' | 'skipped' | 'done';

/** GET /api/workspaces/{ws}/onboarding. */
export type Onboarding = {
  state: OnboardingState;
  agent_id: string;
  session_id: string;
  run_id: string;
  run_status: string;
  /** The Foreman's open card; '' when none waits. */
  card_id: string;
  /** Running, but the run ended without finishing: POST start resumes it. */
  stopped: boolean;
  /** No model is configured: set one up in Settings → Models, then resume. */
  needs_model: boolean;
  error: string;
};

/** Whether the app should open the Foreman's chat on load: an onboarding waits on its card. */
export function opensForeman(o: Onboarding | null): boolean {
  return !!o && o.state === 'running' && !!o.card_id;
}

/**
 * Whether the Foreman's spot shows on the board: once onboarding started, until
 * it is done. A workspace that never onboarded (joined from another device, or
 * the app run with RERUN_ONBOARDING=off) offers it in Settings only.
 */
export function showsForeman(o: Onboarding | null): boolean {
  return !!o && (o.state === 'running' || o.state === 'skipped');
}

/** The settings menu's onboarding entry: its label, or null when none fits. */
export function settingsEntry(o: Onboarding | null): string | null {
  if (!o) return null;
  if (o.state === 'done') return 'Run onboarding again';
  // A skipped onboarding starts over in a new chat; a stopped one goes on.
  if (o.state === 'new' || o.state === 'skipped') return 'Start onboarding';
  if (o.stopped) return 'Resume onboarding';
  return null;
}

/** The line the onboarding bar shows, or null when it shows nothing. */
export function barMessage(o: Onboarding | null): string | null {
  if (!o || o.state !== 'running') return null;
  if (o.stopped && o.needs_model) return 'The Foreman needs a model to go on: set one up in Settings → Models, then resume.';
  if (o.stopped) return `The Foreman stopped${o.error ? `: ${o.error}` : ''}. Resume to go on.`;
  if (o.card_id) return 'The Foreman is setting up your workspace and waits for your answers.';
  return 'The Foreman is setting up your workspace.';
}

/** Whether a change event may change the onboarding's state. */
export function touchesOnboarding(kind: string, agent: string | undefined, foremanId: string): boolean {
  if (kind === 'onboarding.updated') return true;
  return agent === foremanId && (kind.startsWith('run.') || kind.startsWith('pause.'));
}
