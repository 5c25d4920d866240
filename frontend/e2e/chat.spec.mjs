// The agent runtime against a real `rerun serve` talking to the fake model
// server: chat with streaming and tools, monitoring, logs, stop, busy ring.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  addAgent,
  agent,
  apiClient,
  closePanel,
  launchBrowser,
  openApp,
  openTab,
  shotPath,
  startFakeLLM,
  startServer,
} from './harness.mjs';

let llm;
let server;
let browser;
let context;

before(async () => {
  llm = await startFakeLLM();
  server = await startServer({ llm });
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
});
after(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
  await llm?.stop();
});

/** Types a message in the Chat tab and sends it with Enter. */
async function say(page, text) {
  const input = page.getByTestId('chat-input');
  await input.fill(text);
  await input.press('Enter');
}

const agentBubbles = (page) => page.getByTestId('msg-agent');

describe('chat', () => {
  let page;
  let ada;

  test('a message streams back its answer', async () => {
    page = await openApp(context, server);
    ada = await addAgent(page, 'Ada Lovelace', 'Main');
    const panel = page.getByTestId('agent-panel');
    assert.equal(await panel.getByRole('tab', { name: 'Chat' }).getAttribute('aria-selected'), 'true');
    await page.getByTestId('chat-empty').waitFor();
    assert.equal(await page.getByTestId('chat-send').isDisabled(), true, 'nothing to send yet');
    await say(page, 'hello');
    await page.getByTestId('msg-user').filter({ hasText: 'hello' }).waitFor();
    await agentBubbles(page).filter({ hasText: 'You said: hello' }).waitFor();
    assert.equal(await page.getByTestId('chat-input').inputValue(), '');
  });

  test('a tool call shows as a row that expands to its output', async () => {
    await say(page, 'use tool list_files {}');
    const row = page.getByTestId('tool-row').filter({ hasText: 'list_files' });
    await row.waitFor();
    const answer = agentBubbles(page).filter({ hasText: /^\s*Tool said:/ });
    await answer.waitFor();
    await row.getByRole('button', { expanded: false }).click();
    await row.getByText('Output').waitFor();
    await row.locator('pre').nth(1).waitFor();
    assert.match(await row.locator('pre').nth(1).textContent(), /empty|\S/);
    assert.match(await row.textContent(), /✓/);
    // The streamed bubble was replaced by the committed step: one copy of each answer.
    assert.equal(await agentBubbles(page).filter({ hasText: 'You said: hello' }).count(), 1);
    assert.equal(await page.locator('.msg.streaming').count(), 0);
  });

  test('after a reload the transcript is still there', async () => {
    await page.reload();
    await agent(page, ada).click();
    await agentBubbles(page).filter({ hasText: 'You said: hello' }).waitFor();
    await agentBubbles(page).filter({ hasText: /Tool said:/ }).waitFor();
    assert.equal(await page.getByTestId('tool-row').count(), 1);
    for (const scheme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.getByTestId('tool-row').getByRole('button').first().click();
      await page.waitForTimeout(150);
      await page.screenshot({ path: shotPath(`chat-${scheme}.png`) });
      await page.getByTestId('tool-row').getByRole('button').first().click();
    }
    await page.emulateMedia({ colorScheme: 'light' });
  });

  test('monitoring lists the runs with tokens and a chart; a run opens in Logs', async () => {
    await openTab(page, 'Monitoring');
    const rows = page.getByTestId('run-row');
    await rows.nth(1).waitFor();
    assert.equal(await rows.count(), 2);
    assert.match(await rows.first().textContent(), /done/);
    assert.match(await rows.first().textContent(), /\d+ in · \d+ out/);
    const chart = page.getByTestId('usage-chart');
    await chart.locator('svg').waitFor();
    assert.equal(await chart.getByTestId('usage-bar').count(), 30);
    await chart.getByTestId('usage-cost-line').waitFor();
    await page.screenshot({ path: shotPath('monitoring.png') });

    // newest first: the tool run
    await rows.first().click();
    assert.equal(await page.getByRole('tab', { name: 'Logs' }).getAttribute('aria-selected'), 'true');
    const steps = page.getByTestId('logs-tab').getByTestId('step');
    await steps.nth(4).waitFor();
    const kinds = await steps.evaluateAll((els) => els.map((e) => e.getAttribute('data-kind')));
    assert.deepEqual(kinds, ['input', 'model', 'tool_call', 'tool_result', 'model']);
    assert.match(await page.getByTestId('run-header').textContent(), /done/);
    await page.screenshot({ path: shotPath('logs.png') });

    // the run picker switches to the other run
    const picker = page.getByTestId('logs-run-picker');
    const other = await picker.locator('option').nth(1).getAttribute('value');
    await picker.selectOption(other);
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="logs-tab"] [data-testid="step"]').length === 2);
    await openTab(page, 'Chat');
  });

  test('tabs are a tablist reachable with the arrow keys', async () => {
    const chatTab = page.getByRole('tab', { name: 'Chat' });
    await chatTab.focus();
    await page.keyboard.press('ArrowRight');
    assert.equal(await page.getByRole('tab', { name: 'To handle' }).getAttribute('aria-selected'), 'true');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent?.trim()), 'To handle');
    await page.keyboard.press('ArrowRight');
    assert.equal(await page.getByRole('tab', { name: 'Desktop' }).getAttribute('aria-selected'), 'true');
    await page.keyboard.press('ArrowRight');
    assert.equal(await page.getByRole('tab', { name: 'Monitoring' }).getAttribute('aria-selected'), 'true');
    await page.keyboard.press('End');
    assert.equal(await page.getByRole('tab', { name: 'Settings' }).getAttribute('aria-selected'), 'true');
    await page.keyboard.press('ArrowRight');
    assert.equal(await chatTab.getAttribute('aria-selected'), 'true');
    assert.equal(await chatTab.getAttribute('tabindex'), '0');
    assert.equal(await page.getByRole('tab', { name: 'Logs' }).getAttribute('tabindex'), '-1');
  });

  test('New chat starts empty; switching back shows the old messages', async () => {
    await page.getByTestId('new-chat').click();
    await page.getByTestId('chat-empty').waitFor();
    assert.equal(await agentBubbles(page).count(), 0);
    await say(page, 'hello again');
    await agentBubbles(page).filter({ hasText: 'You said: hello again' }).waitFor();
    const picker = page.getByTestId('chat-session');
    await picker.locator('option').nth(1).waitFor({ state: 'attached' });
    assert.equal(await picker.locator('option').count(), 2);
    const old = await picker.locator('option', { hasText: /^hello$/ }).getAttribute('value');
    await picker.selectOption(old);
    await agentBubbles(page).filter({ hasText: 'You said: hello' }).first().waitFor();
    await agentBubbles(page).filter({ hasText: /Tool said:/ }).waitFor();
    assert.equal(await agentBubbles(page).filter({ hasText: 'hello again' }).count(), 0);
    await closePanel(page);
    assert.deepEqual(page.errors, []);
  });

  test('Stop cancels a long tool run; the board shows it busy meanwhile', async () => {
    const call = apiClient(server);
    const { current } = await call('GET', '/api/workspaces');
    const board = await call('GET', `/api/workspaces/${current}/board`);
    const sh = await call('POST', `/api/workspaces/${current}/agents`, {
      name: 'Shelly',
      box_id: board.boxes[0].id,
      capabilities: ['files', 'shell'],
    });
    // Commands run without an approval card here (hitl.spec.mjs covers the card).
    await call('PATCH', `/api/workspaces/${current}/agents/${sh.id}`, { ask_first: { shell: false } });
    await agent(page, sh.handle).click();
    await openTab(page, 'Chat');
    await say(page, 'use tool run_command {"command":"sleep 120"}');
    const status = page.getByTestId('chat-status');
    await status.getByText('Running run_command…').waitFor();
    await agent(page, sh.handle).locator('[data-testid="agent-busy"]').waitFor();
    await page.screenshot({ path: shotPath('busy.png') });
    const started = Date.now();
    await page.getByTestId('chat-stop').click();
    await page.getByTestId('chat-cancel').waitFor();
    // The stop ends the command, not waits it out (how fast is for benchmarks).
    assert.ok(Date.now() - started < 60_000, `cancelled after ${Date.now() - started} ms: the stop waited for the command`);
    await status.waitFor({ state: 'detached' });
    await agent(page, sh.handle).locator('[data-testid="agent-busy"]').waitFor({ state: 'detached' });
    await openTab(page, 'Monitoring');
    await page.getByTestId('run-row').first().getByText('cancelled').waitFor();
    assert.deepEqual(page.errors, []);
  });
});
