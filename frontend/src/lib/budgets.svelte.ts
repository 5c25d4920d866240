// The budgets the window shows: the workspace's and each agent's limits and
// spend per day, loaded when a view first watches one and kept fresh by the
// event stream. budget.updated reloads its scope at once (a form, update_agent,
// a card's "raise"); a run's step or status (what was spent) reloads its
// agent's and the workspace's budgets once a burst has passed. The Settings
// forms, the Monitoring charts and the budget cards all read from here.
import { api, errorMessage } from './api';
import type { Budget } from './budgets';
import type { ChangeEvent } from './events';

/** How long a burst of run events is waited out before spend is reloaded. */
export const SPEND_DELAY_MS = 250;

/** How many days of spend a budget holds (the Monitoring charts show them all). */
export const BUDGET_DAYS = 30;

export type BudgetLoader = (wsId: string, agentId: string) => Promise<Budget>;

const loadBudget: BudgetLoader = (wsId, agentId) =>
  agentId ? api.agentBudget(wsId, agentId, BUDGET_DAYS) : api.workspaceBudget(wsId, BUDGET_DAYS);

/** The store key of a scope: agentId '' is the workspace's own budget. */
const keyOf = (wsId: string, agentId: string) => `${wsId}\u0000${agentId}`;

export class BudgetState {
  private budgets = $state<Record<string, Budget>>({});
  private failures = $state<Record<string, string>>({});
  private watchers = new Map<string, number>();
  /** The latest load asked for, per key: an older answer arriving late is dropped. */
  private seq = new Map<string, number>();
  private due = new Set<string>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private load: BudgetLoader = loadBudget,
    private delay = SPEND_DELAY_MS,
  ) {}

  /** The budget of an agent, or of the workspace (agentId ''); undefined until loaded. */
  of(wsId: string, agentId = ''): Budget | undefined {
    return this.budgets[keyOf(wsId, agentId)];
  }

  /** Why the last load of a scope failed; '' when it did not. */
  error(wsId: string, agentId = ''): string {
    return this.failures[keyOf(wsId, agentId)] ?? '';
  }

  /** Keeps a scope loaded and fresh while a view shows it; returns the unwatch. */
  watch(wsId: string, agentId = ''): () => void {
    const k = keyOf(wsId, agentId);
    const n = this.watchers.get(k) ?? 0;
    this.watchers.set(k, n + 1);
    if (n === 0) void this.reload(k);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const left = (this.watchers.get(k) ?? 1) - 1;
      if (left > 0) return void this.watchers.set(k, left);
      this.watchers.delete(k);
      this.due.delete(k);
    };
  }

  /** Takes one event of the stream. */
  onChange(ev: ChangeEvent) {
    if (ev.kind === 'budget.updated') {
      const k = keyOf(ev.workspace, ev.agent ?? '');
      this.due.delete(k);
      if (this.watchers.has(k)) void this.reload(k);
      return;
    }
    if ((ev.kind === 'run.step' || ev.kind === 'run.updated') && ev.agent) {
      for (const k of [keyOf(ev.workspace, ev.agent), keyOf(ev.workspace, '')]) if (this.watchers.has(k)) this.due.add(k);
      if (this.due.size && this.timer === undefined) this.timer = setTimeout(() => this.flush(), this.delay);
    }
  }

  /** Reloads a watched scope now (after this window changed it, before its event arrives). */
  refresh(wsId: string, agentId = ''): Promise<void> {
    const k = keyOf(wsId, agentId);
    return this.watchers.has(k) ? this.reload(k) : Promise.resolve();
  }

  /** The stream reconnected: reload every watched scope. */
  resync() {
    for (const k of this.watchers.keys()) void this.reload(k);
  }

  private flush() {
    this.timer = undefined;
    const keys = [...this.due];
    this.due.clear();
    for (const k of keys) if (this.watchers.has(k)) void this.reload(k);
  }

  private async reload(k: string) {
    const n = (this.seq.get(k) ?? 0) + 1;
    this.seq.set(k, n);
    const [wsId, agentId] = k.split('\u0000') as [string, string];
    try {
      const b = await this.load(wsId, agentId);
      if (this.seq.get(k) !== n) return;
      this.budgets[k] = b;
      this.failures[k] = '';
    } catch (err) {
      if (this.seq.get(k) !== n) return;
      this.failures[k] = errorMessage(err);
    }
  }
}

export const budgets = new BudgetState();
