import { describe, expect, it } from 'vitest';
import { render } from 'svelte/server';
import BudgetCard from '../components/BudgetCard.svelte';
import { answeredSummary, askedSummary, budgetAmount, budgetDraft, budgetLine, budgetReply, kinds, parseAmount, pauseTitle } from './pauses';
import type { BudgetRequest, Pause } from './pausetypes';

const day: BudgetRequest = {
  scope: 'workspace',
  period: 'day',
  unit: 'usd',
  agent_id: 'ag_1',
  owner: 'workspace',
  day: '2026-12-02',
  limit: 5,
  spent: 4.8,
  need: 0.31,
  suggest_more: 2.5,
  suggest_limit: 10,
};
const run: BudgetRequest = { ...day, scope: 'run', period: 'run', unit: 'tokens', owner: 'agent', day: undefined, limit: 20000, spent: 19500, need: 1200, suggest_more: 10000, suggest_limit: 40000 };

const pauseOf = (request: BudgetRequest, answer: Pause['answer'] = null): Pause =>
  ({ id: 'pau_1', run_id: 'run_1', agent_id: 'ag_1', session_id: 'ses_1', kind: 'budget', status: answer ? 'answered' : 'open', tool_call_id: '', automated: true, created_at: '', answered_at: null, request, answer }) as Pause;

describe('budget card', () => {
  it('says what was spent against which limit', () => {
    expect(budgetLine(day)).toBe("Spent $4.80 of the workspace's daily limit of $5.00");
    expect(budgetLine(run)).toBe("Spent 19,500 tokens of the agent's per-run limit of 20,000 tokens");
    expect(budgetAmount(run, 1234.6)).toBe('1,235 tokens');
    expect(pauseTitle(pauseOf(day), 'scout')).toBe('@scout reached a daily budget');
    expect(askedSummary(pauseOf(run))).toContain('per-run limit');
  });

  it('is registered as a kind of pause with its card', () => {
    expect(kinds.budget.label).toBe('Budget');
    expect(kinds.budget.Card).toBe(BudgetCard);
    expect(kinds.budget.dismissHint).toContain('the run stops');
  });

  it('builds each answer from the choice and its amount', () => {
    const d = budgetDraft(day);
    expect(d).toEqual({ choice: '', more: '2.5', limit: '10' });
    expect(budgetReply(day, d).reply).toBeNull();
    expect(budgetReply(day, { ...d, choice: 'allow' }).reply).toEqual({ choice: 'allow', amount: 2.5 });
    expect(budgetReply(day, { ...d, choice: 'raise', limit: '$12.50' }).reply).toEqual({ choice: 'raise', amount: 12.5 });
    expect(budgetReply(day, { ...d, choice: 'stop', more: 'junk' }).reply).toEqual({ choice: 'stop', amount: 0 });
    expect(budgetReply(run, { choice: 'allow', more: '5,000.7', limit: '' }).reply).toEqual({ choice: 'allow', amount: 5000 });
  });

  it('refuses amounts that would not let the run go on, saying why', () => {
    const d = budgetDraft(day);
    expect(budgetReply(day, { ...d, choice: 'allow', more: '0' })).toEqual({ reply: null, problem: 'Enter an amount above 0.' });
    expect(budgetReply(day, { ...d, choice: 'allow', more: 'lots' }).problem).toBe('Enter an amount above 0.');
    expect(budgetReply(day, { ...d, choice: 'raise', limit: '4' }).problem).toBe('Raise it above what was spent ($4.80).');
    expect(parseAmount('20 000 tokens')).toBe(20000);
    expect(parseAmount('1.2.3')).toBeNaN();
  });

  it('reads back each answer in the transcript', () => {
    expect(answeredSummary(pauseOf(day, { choice: 'allow', amount: 2.5 }))).toEqual({
      title: 'You allowed more',
      lines: [{ label: 'For this run', value: '$2.50 more', tone: 'ok' }],
    });
    expect(answeredSummary(pauseOf(run, { choice: 'raise', amount: 40000 })).lines[0]!.value).toBe('40,000 tokens');
    expect(answeredSummary(pauseOf(day, { choice: 'stop', amount: 0 })).title).toBe('You stopped the run');
  });

  it('renders the spend, the bar and the three ways on, with the suggestions filled in', () => {
    const { body } = render(BudgetCard, { props: { request: day } });
    expect(body).toContain("Spent $4.80 of the workspace's daily limit of $5.00 on 2026-12-02.");
    expect(body).toContain('aria-valuenow="96"');
    for (const id of ['budget-allow', 'budget-raise', 'budget-stop']) expect(body).toContain(`data-testid="${id}"`);
    expect(body).toContain('value="2.5"');
    expect(body).toContain('value="10"');
    expect(body).toContain('Raise the daily limit to');
    const perRun = render(BudgetCard, { props: { request: run } }).body;
    expect(perRun).toContain('Raise the per-run limit to');
    expect(perRun).toContain('tokens more for this run');
  });
});
