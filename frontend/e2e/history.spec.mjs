// Your data, day to day: a coworker's Logs find a run by a word of it and
// open it at the step; a run is pinned so retention keeps it; Settings →
// History & disk keeps runs N days (a bad value says what to fix) and shows
// what each coworker takes on disk; a pin or settings saved in another
// window show at once. The palette finds the same run.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { addAgent, agent, apiClient, launchBrowser, openApp, openTab, runEnded, shoot, startFakeLLM, startServer, until } from './harness.mjs';

let server;
let browser;
let llm;

before(async () => {
  llm = await startFakeLLM();
  server = await startServer({ llm });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.stop();
  await llm?.stop();
});

test('search a run, pin it, keep history and see disk use', async () => {
  const context = await browser.newContext();
  const page = await openApp(context, server);
  const call = apiClient(server);
  await addAgent(page, 'Archivist');
  const { current: wsId } = await call('GET', '/api/workspaces');
  const { agents } = await call('GET', `/api/workspaces/${wsId}/board`);
  const archivist = agents.find((a) => a.name === 'Archivist');
  for (const text of ['the pelican invoice is late', 'the heron order shipped']) {
    const r = await call('POST', `/api/workspaces/${wsId}/agents/${archivist.id}/messages`, { text });
    await runEnded(call, wsId, r.run_id ?? r.id);
  }

  // Logs: search finds one run by a word of it, and opens it at the step.
  await agent(page, 'archivist').click();
  await openTab(page, 'Logs');
  await page.getByTestId('logs-search-input').fill('pelican');
  await page.getByTestId('logs-search-input').press('Enter');
  const hit = page.getByTestId('search-hit').filter({ hasText: 'pelican' }).first();
  await hit.waitFor();
  assert.equal(await page.getByTestId('search-hit').filter({ hasText: 'heron' }).count(), 0, 'the other run is not a hit');
  assert.equal(await hit.locator('mark').first().textContent(), 'pelican');
  const runId = await hit.getAttribute('data-run-id');
  await hit.click();

  // Pin it: retention keeps it whatever the setting.
  const pin = page.getByTestId('run-pin');
  await pin.filter({ hasText: 'Pin' }).waitFor();
  await pin.click();
  await pin.filter({ hasText: 'Pinned' }).waitFor();
  assert.deepEqual(await call('GET', `/api/workspaces/${wsId}/runs/${runId}/pin`), { pinned: true });
  await shoot(page, 'logs-search');
  // Unpinned and pinned again elsewhere (another window, the API): this
  // window shows it at once.
  await call('PUT', `/api/workspaces/${wsId}/runs/${runId}/pin`, { pinned: false });
  await pin.filter({ hasText: /^Pin$/ }).waitFor();
  await call('PUT', `/api/workspaces/${wsId}/runs/${runId}/pin`, { pinned: true });
  await pin.filter({ hasText: 'Pinned' }).waitFor();

  // Settings → History & disk.
  await page.keyboard.press('Escape');
  await page.getByTestId('open-settings').click();
  await page.getByRole('menuitem', { name: /^History & disk/ }).click();
  const keep = page.getByTestId('history-keep-days');
  await keep.waitFor();
  assert.equal(await keep.inputValue(), '90');
  await keep.fill('0');
  assert.equal(await page.getByTestId('history-save').isDisabled(), true, 'an out-of-range value cannot be saved');
  await keep.fill('30');
  await page.getByTestId('history-save').click();
  await until('the 30 days saved', async () => (await call('GET', `/api/workspaces/${wsId}/retention`)).keep_days === 30);
  // Saved elsewhere: the untouched form follows; an edited one keeps the
  // person's value and offers the new settings.
  const policy = await call('GET', `/api/workspaces/${wsId}/retention`);
  await call('PUT', `/api/workspaces/${wsId}/retention`, { ...policy, keep_days: 45 });
  await until('the form shows the 45 days saved elsewhere', async () => (await keep.inputValue()) === '45');
  await keep.fill('20');
  await call('PUT', `/api/workspaces/${wsId}/retention`, { ...policy, keep_days: 60 });
  await page.getByTestId('history-newer').waitFor();
  assert.equal(await keep.inputValue(), '20', 'the edited value stays');
  await shoot(page, 'history-newer');
  await page.getByTestId('history-load-newer').click();
  await until('the form shows the 60 days', async () => (await keep.inputValue()) === '60');
  assert.equal(await page.getByTestId('history-newer').count(), 0);
  const row = page.getByTestId('disk-agent').filter({ hasText: 'Archivist' });
  await row.waitFor();
  await page.getByTestId('disk-total').waitFor();
  await shoot(page, 'history-dialog');
  await page.keyboard.press('Escape');

  // The palette finds the run too.
  await page.keyboard.press('Control+k');
  await page.keyboard.type('heron');
  await page.getByText('Found in runs').waitFor();
  await context.close();
});
