// What device sync adds to the agent panel and Settings, against a real
// `rerun serve`: summaries of runs made on another device (written into the
// workspace database as sync writes them) show in Monitoring under "On your
// other devices", read-only, and never become runs here; Settings →
// Variables has the opt-in that lets values sync, off by default.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { agent, apiClient, launchBrowser, openApp, openTab, shoot, startServer } from './harness.mjs';

let server;
let browser;
let context;
let call;
let wsId;

before(async () => {
  process.env.RERUN_KEYCHAIN = 'off';
  server = await startServer();
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  call = apiClient(server);
  wsId = (await call('GET', '/api/workspaces')).current;
});
after(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
});

/** Writes rows into the running server's workspace database, as sync's apply does. */
function sql(statement) {
  const db = join(server.dataDir, 'workspaces', wsId, 'workspace.db');
  execFileSync('sqlite3', ['-cmd', '.timeout 5000', db, statement]);
}

test('runs of another device show as summaries and never run here', async () => {
  const board = await call('GET', `/api/workspaces/${wsId}/board`);
  const a = await call('POST', `/api/workspaces/${wsId}/agents`, { name: 'Digest', box_id: board.boxes[0].id });
  const output = 'Sent the digest to the team: three new orders, one refund, and the supplier call moved to Friday.';
  sql(`INSERT INTO run_summaries (id, agent_id, source, status, input, output, error, input_tokens, output_tokens, cost_usd, created_at, started_at, ended_at, device) VALUES
    ('run_far_done', '${a.id}', 'schedule', 'done', 'Write the morning digest', '${output}', '', 1200, 340, 0.0042, '2026-11-30T09:00:00Z', '2026-11-30T09:00:00Z', '2026-11-30T09:00:07Z', 'dev_laptopathome7f3k2'),
    ('run_far_failed', '${a.id}', 'chat', 'failed', 'Check the shop', '', 'the model provider refused the key', 10, 0, 0, '2026-11-30T08:00:00Z', '2026-11-30T08:00:00Z', '2026-11-30T08:00:01Z', 'dev_laptopathome7f3k2'),
    ('run_far_running', '${a.id}', 'trigger', 'running', 'Handle the order', '', '', 0, 0, 0, '2026-11-30T10:00:00Z', '2026-11-30T10:00:00Z', NULL, 'dev_laptopathome7f3k2')`);

  const page = await openApp(context, server);
  await agent(page, a.handle).click();
  await openTab(page, 'Monitoring');
  const section = page.getByTestId('runs-elsewhere');
  await section.waitFor();
  assert.match(await section.locator('h3').innerText(), /On your other devices/);
  const rows = section.getByTestId('elsewhere-row');
  assert.equal(await rows.count(), 3);
  const done = section.locator('[data-run-id="run_far_done"]');
  assert.match(await done.innerText(), /Write the morning digest/);
  assert.match(await done.innerText(), /Sent the digest to the team/);
  assert.match(await done.innerText(), /Device e7f3k2/);
  assert.match(await done.getByTestId('run-status').innerText(), /done/i);
  assert.match(await section.locator('[data-run-id="run_far_failed"]').innerText(), /refused the key/);
  await shoot(page, 'monitoring-elsewhere');

  // Read-only: a click opens nothing, and nothing ran or was queued here.
  await done.click();
  assert.equal(await page.getByRole('tab', { name: 'Monitoring' }).getAttribute('aria-selected'), 'true');
  await page.waitForTimeout(500);
  assert.deepEqual(await call('GET', `/api/workspaces/${wsId}/agents/${a.id}/runs`), []);
  assert.equal((await call('GET', `/api/workspaces/${wsId}/agents/${a.id}/runs/elsewhere`)).length, 3);
  assert.equal(await page.getByTestId('runs-table').count(), 0, 'this device has no runs of its own');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('Settings → Variables: the value sync opt-in, off by default', async () => {
  const page = await openApp(context, server);
  await page.getByTestId('open-settings').click();
  await page.getByRole('menuitem', { name: /^Variables/ }).click();
  const dlg = page.getByTestId('variables-dialog');
  const sw = dlg.getByTestId('variable-sync').getByRole('switch');
  await sw.waitFor();
  assert.match(await sw.innerText(), /Sync variable values to my other devices \(end-to-end encrypted\)/);
  assert.equal(await sw.getAttribute('aria-checked'), 'false');
  assert.equal((await call('GET', `/api/workspaces/${wsId}/settings/variable-sync`)).enabled, false);

  await sw.click();
  await page.waitForFunction(() => document.querySelector('[data-testid="variable-sync"] [role=switch]')?.getAttribute('aria-checked') === 'true');
  assert.equal((await call('GET', `/api/workspaces/${wsId}/settings/variable-sync`)).enabled, true);
  await shoot(page, 'variables-sync-on');

  // Still on after a reload; off again with a click.
  await page.reload();
  await page.getByTestId('workspace-name').filter({ hasNotText: 'Loading…' }).waitFor();
  await page.getByTestId('open-settings').click();
  await page.getByRole('menuitem', { name: /^Variables/ }).click();
  const again = page.getByTestId('variables-dialog').getByTestId('variable-sync').getByRole('switch');
  await page.waitForFunction(() => document.querySelector('[data-testid="variable-sync"] [role=switch]')?.getAttribute('aria-checked') === 'true');
  await again.click();
  await page.waitForFunction(() => document.querySelector('[data-testid="variable-sync"] [role=switch]')?.getAttribute('aria-checked') === 'false');
  assert.equal((await call('GET', `/api/workspaces/${wsId}/settings/variable-sync`)).enabled, false);
  assert.deepEqual(page.errors, []);
  await page.close();
});
