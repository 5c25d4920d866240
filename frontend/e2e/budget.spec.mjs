// Spend budgets against a real `rerun serve` and the fake model server: a
// daily token limit set in Settings stops a run on a budget card, "allow
// more" lets it finish; the Settings form, the Monitoring chart (in a second
// window) and the open card follow every change without a reload.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { agent, apiClient, launchBrowser, openApp, openTab, runEnded, shoot, startFakeLLM, startServer, until } from './harness.mjs';

let llm;
let server;
let browser;
let context;
let call;
let wsId;

before(async () => {
  process.env.RERUN_KEYCHAIN = 'off';
  llm = await startFakeLLM();
  server = await startServer({ llm });
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  call = apiClient(server);
  wsId = (await call('GET', '/api/workspaces')).current;
});
after(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
  await llm?.stop();
});

describe('budgets', () => {
  test('a daily token limit pauses a run on a card; allow more and it finishes; form, chart and card update live', async () => {
    const board = await call('GET', `/api/workspaces/${wsId}/board`);
    const bea = await call('POST', `/api/workspaces/${wsId}/agents`, { name: 'Bea Budget', box_id: board.boxes[0].id, capabilities: [] });
    const budgetPath = `/api/workspaces/${wsId}/agents/${bea.id}/budget`;

    const page = await openApp(context, server);
    await agent(page, bea.handle).click();
    await page.getByTestId('chat-tab').waitFor();

    // A second window watches Monitoring: no daily limit, no budget chart.
    const watch = await openApp(context, server);
    await agent(watch, bea.handle).click();
    await openTab(watch, 'Monitoring');
    await watch.getByTestId('monitoring-tab').waitFor();
    assert.equal(await watch.getByTestId('budget-chart').count(), 0);

    // A small daily token limit, set in Settings.
    await openTab(page, 'Settings');
    const form = page.getByTestId('agent-budget-form');
    const dayTokens = form.getByTestId('budget-day_tokens');
    await dayTokens.fill('300');
    await form.getByRole('button', { name: 'Apply limits' }).click();
    await form.getByRole('status').getByText('Saved').waitFor();
    assert.deepEqual((await call('GET', `${budgetPath}?days=1`)).limits, { run_tokens: 0, run_usd: 0, day_tokens: 300, day_usd: 0 });

    // The other window's chart appears with the limit, without a reload.
    const chart = watch.getByTestId('budget-chart').filter({ hasText: 'tokens per day' });
    await chart.waitFor();
    await chart.getByText('300 tokens').waitFor();
    const todayBefore = (await chart.getByTestId('budget-today').textContent()).trim();

    // Changed elsewhere (as update_agent does): the open form follows.
    await call('PATCH', budgetPath, { day_tokens: 400 });
    await until('the form to show the new limit', async () => (await dayTokens.inputValue()) === '400');
    await chart.getByText('400 tokens').waitFor();

    // The next message passes the limit: the run waits on a budget card.
    // (In front: a page behind another runs no animations, and the card rises in.)
    await page.bringToFront();
    await openTab(page, 'Chat');
    const input = page.getByTestId('chat-input');
    await input.fill('hello');
    await input.press('Enter');
    const card = page.locator('[data-testid="pause-card"][data-kind="budget"]');
    await card.waitFor();
    assert.match(await card.locator('h3').textContent(), /reached a daily budget/);
    assert.match(await card.getByTestId('budget-line').textContent(), /of the agent's daily limit of 400 tokens/);
    await page.getByTestId('chat-status').getByText('Waiting for you').waitFor();
    const runs = await call('GET', `/api/workspaces/${wsId}/agents/${bea.id}/runs`);
    const paused = runs.find((r) => r.status === 'paused');
    assert.ok(paused, `a paused run; runs: ${JSON.stringify(runs.map((r) => r.status))}`);

    // The limit is raised in Settings elsewhere while the card is open: the card says so.
    await call('PATCH', budgetPath, { day_tokens: 500 });
    await card.getByTestId('budget-changed').getByText('it is 500 tokens now').waitFor();
    assert.match(await card.getByTestId('budget-line').textContent(), /of the agent's daily limit of 500 tokens/);
    await shoot(page, 'budget-card');

    // Allow more for this run: it finishes.
    await card.getByTestId('budget-allow').check();
    assert.match(await card.getByTestId('budget-more').inputValue(), /^\d+$/);
    await card.getByTestId('pause-submit').click();
    await card.waitFor({ state: 'detached' });
    await page.getByTestId('msg-agent').filter({ hasText: 'You said: hello' }).waitFor();
    await page.getByTestId('chat-input').waitFor();
    assert.equal((await runEnded(call, wsId, paused.id)).status, 'done');

    // What the run spent shows in the other window's chart, live.
    await until('the chart to count the run', async () => (await chart.getByTestId('budget-today').textContent()).trim() !== todayBefore);
    await watch.bringToFront();
    await shoot(watch, 'budget-chart');
    assert.deepEqual(page.errors, []);
    assert.deepEqual(watch.errors, []);
  });

  test("Settings → Models: the workspace's budget form applies limits and follows changes made elsewhere", async () => {
    const page = await openApp(context, server);
    await page.getByTestId('open-settings').click();
    await page.getByRole('menuitem', { name: /^Models/ }).click();
    const form = page.getByTestId('models-dialog').getByTestId('workspace-budget-form');
    const dayUSD = form.getByTestId('budget-day_usd');
    await dayUSD.fill('12.5');
    await form.getByRole('button', { name: 'Apply limits' }).click();
    await form.getByRole('status').getByText('Saved').waitFor();
    assert.equal((await call('GET', `/api/workspaces/${wsId}/budget?days=1`)).limits.day_usd, 12.5);

    // Changed elsewhere while the person types in another field: that field keeps what they typed.
    const runTokens = form.getByTestId('budget-run_tokens');
    await runTokens.fill('9000');
    await call('PATCH', `/api/workspaces/${wsId}/budget`, { day_usd: 20 });
    await until('the form to show the new daily limit', async () => (await dayUSD.inputValue()) === '20');
    assert.equal(await runTokens.inputValue(), '9000');
    assert.deepEqual(page.errors, []);
  });
});
