// The step a search hit asked to see: the Logs tab scrolls to it once it
// shows that run, then forgets it.

class StepFocus {
  run = $state<string | null>(null);
  seq = $state<number | null>(null);

  /** Asks the Logs tab to show step `seq` of `run`. */
  set(run: string, seq: number | undefined) {
    this.run = run;
    this.seq = seq ?? null;
  }

  /** The step to show for `run` (null when none was asked), forgetting it. */
  take(run: string): number | null {
    if (this.run !== run) return null;
    const seq = this.seq;
    this.run = this.seq = null;
    return seq;
  }
}

export const stepFocus = new StepFocus();
