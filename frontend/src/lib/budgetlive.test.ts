// The live budgets: the store fed by the event stream, the limits form
// taking changes made elsewhere, and the budget card following its limit.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { NO_LIMITS, limitsDraft, rebaseDraft } from './budgets';
import { BudgetState } from './budgets.svelte';
import { changedNote, liveRequest } from './pauses';
import type { Budget } from './budgets';
import type { ChangeEvent } from './events';
import type { BudgetRequest } from './pausetypes';

const budgetOf = (day_tokens: number, today = 0): Budget => ({
  limits: { ...NO_LIMITS, day_tokens },
  days: [
    { day: '2026-12-01', tokens: 50, cost_usd: 0 },
    { day: '2026-12-02', tokens: today, cost_usd: 0 },
  ],
});

/** A store whose loads answer from `server`, counting them per scope. */
function storeOn(server: Record<string, Budget>) {
  const loads: string[] = [];
  const store = new BudgetState(async (ws, agent) => {
    loads.push(`${ws}/${agent}`);
    const b = server[agent];
    if (!b) throw new Error(`no budget for ${agent}`);
    return structuredClone(b);
  }, 100);
  return { store, loads };
}

const ev = (kind: string, agent?: string, workspace = 'ws_1'): ChangeEvent => ({ workspace, kind, ...(agent ? { agent, id: agent } : {}) });

describe('the live budget store', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('loads a scope when first watched and reloads it on budget.updated', async () => {
    const server = { ag_1: budgetOf(1000), '': budgetOf(0) };
    const { store, loads } = storeOn(server);
    const off = store.watch('ws_1', 'ag_1');
    const again = store.watch('ws_1', 'ag_1');
    await vi.runAllTimersAsync();
    expect(loads).toEqual(['ws_1/ag_1']);
    expect(store.of('ws_1', 'ag_1')?.limits.day_tokens).toBe(1000);

    server.ag_1 = budgetOf(1500);
    store.onChange(ev('budget.updated', 'ag_1'));
    await vi.runAllTimersAsync();
    expect(store.of('ws_1', 'ag_1')?.limits.day_tokens).toBe(1500);
    expect(loads).toHaveLength(2);

    // Another scope, another workspace, an unwatched agent: nothing to load.
    store.onChange(ev('budget.updated'));
    store.onChange(ev('budget.updated', 'ag_1', 'ws_2'));
    store.onChange(ev('budget.updated', 'ag_2'));
    await vi.runAllTimersAsync();
    expect(loads).toHaveLength(2);

    off();
    off(); // twice is once
    store.onChange(ev('budget.updated', 'ag_1'));
    await vi.runAllTimersAsync();
    expect(loads, 'still watched once').toHaveLength(3);
    again();
    store.onChange(ev('budget.updated', 'ag_1'));
    await vi.runAllTimersAsync();
    expect(loads, 'no one watches it').toHaveLength(3);
  });

  it("reloads the agent's and the workspace's spend once after a burst of run events", async () => {
    const server = { ag_1: budgetOf(1000), '': budgetOf(5000) };
    const { store, loads } = storeOn(server);
    store.watch('ws_1', 'ag_1');
    store.watch('ws_1');
    await vi.runAllTimersAsync();
    loads.length = 0;

    server.ag_1 = budgetOf(1000, 420);
    server[''] = budgetOf(5000, 900);
    for (let i = 0; i < 20; i++) store.onChange(ev(i % 2 ? 'run.step' : 'run.updated', 'ag_1'));
    store.onChange(ev('run.step')); // no agent: not a run's spend
    expect(loads).toEqual([]);
    await vi.advanceTimersByTimeAsync(99);
    expect(loads).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(loads.sort()).toEqual(['ws_1/', 'ws_1/ag_1']);
    expect(store.of('ws_1', 'ag_1')?.days.at(-1)?.tokens).toBe(420);
    expect(store.of('ws_1')?.days.at(-1)?.tokens).toBe(900);

    // Another agent's spend counts against the workspace only.
    loads.length = 0;
    store.onChange(ev('run.updated', 'ag_2'));
    await vi.runAllTimersAsync();
    expect(loads).toEqual(['ws_1/']);
  });

  it('keeps the newest answer when loads overlap, and says why a load failed', async () => {
    let release: (b: Budget) => void = () => {};
    const answers: Budget[] = [];
    const store = new BudgetState((_, agent) => {
      if (agent === 'gone') return Promise.reject(new Error('no agent with id "gone"'));
      return answers.length ? Promise.resolve(answers.shift()!) : new Promise((r) => (release = r));
    }, 100);
    store.watch('ws_1', 'ag_1'); // the first load hangs
    answers.push(budgetOf(2000));
    store.onChange(ev('budget.updated', 'ag_1'));
    await vi.runAllTimersAsync();
    expect(store.of('ws_1', 'ag_1')?.limits.day_tokens).toBe(2000);
    release(budgetOf(1000)); // the older answer arrives late
    await vi.runAllTimersAsync();
    expect(store.of('ws_1', 'ag_1')?.limits.day_tokens).toBe(2000);

    store.watch('ws_1', 'gone');
    await vi.runAllTimersAsync();
    expect(store.error('ws_1', 'gone')).toBe('no agent with id "gone"');
    expect(store.of('ws_1', 'gone')).toBeUndefined();
  });

  it('reloads every watched scope on resync, and on refresh only a watched one', async () => {
    const { store, loads } = storeOn({ ag_1: budgetOf(1), '': budgetOf(2) });
    store.watch('ws_1', 'ag_1');
    store.watch('ws_1');
    await vi.runAllTimersAsync();
    loads.length = 0;
    store.resync();
    await store.refresh('ws_1', 'ag_1');
    await store.refresh('ws_1', 'ag_9');
    await vi.runAllTimersAsync();
    expect(loads.sort()).toEqual(['ws_1/', 'ws_1/ag_1', 'ws_1/ag_1']);
  });
});

describe('the limits form takes changes made elsewhere', () => {
  it('updates the fields not being edited and keeps what the person typed', () => {
    const before = { ...NO_LIMITS, day_tokens: 1000, run_usd: 0.5 };
    const after = { ...NO_LIMITS, day_tokens: 1500, run_usd: 0.75, day_usd: 5 };
    const typing = { ...limitsDraft(before), run_usd: '0.6' };
    expect(rebaseDraft(typing, before, after)).toEqual({ run_tokens: '', run_usd: '0.6', day_tokens: '1500', day_usd: '5' });
    expect(rebaseDraft(limitsDraft(before), before, NO_LIMITS)).toEqual(limitsDraft(NO_LIMITS));
  });
});

describe('the budget card follows its limit', () => {
  const req: BudgetRequest = {
    scope: 'agent',
    period: 'day',
    unit: 'tokens',
    agent_id: 'ag_1',
    owner: 'agent',
    day: '2026-12-02',
    limit: 1000,
    spent: 300,
    need: 2000,
    suggest_more: 4000,
    suggest_limit: 5000,
  };

  it('shows the limit as set now and the day spent so far', () => {
    expect(liveRequest(req, undefined)).toEqual({ req, changed: false });
    expect(liveRequest(req, budgetOf(1000, 300))).toEqual({ req, changed: false });
    const now = liveRequest(req, budgetOf(8000, 450));
    expect(now).toEqual({ req: { ...req, limit: 8000, spent: 450 }, changed: true });
    expect(changedNote(req, now.req)).toBe('The limit was 1,000 tokens when the run stopped; it is 8,000 tokens now. Pick how it goes on.');
    expect(changedNote(req, liveRequest(req, budgetOf(0, 300)).req)).toBe('The limit of 1,000 tokens was cleared since the run stopped: pick how it goes on.');
  });

  it("keeps a per-run card's spend and an earlier day's", () => {
    const perRun = { ...req, period: 'run' as const, scope: 'run' as const, day: undefined };
    const b = { ...budgetOf(0, 999), limits: { ...NO_LIMITS, run_tokens: 1200 } };
    expect(liveRequest(perRun, b)).toEqual({ req: { ...perRun, limit: 1200 }, changed: true });
    expect(liveRequest({ ...req, day: '2026-11-20' }, budgetOf(1000, 999)).req.spent).toBe(300);
  });
});
