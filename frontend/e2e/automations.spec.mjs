// The Automations tab against a real `rerun serve` and the fake model server:
// a daily schedule made from a preset (description, next times in its zone and
// in local time, Run now, pause), the server's word on a bad cron, and a webhook
// trigger whose URL is copied once, called from outside, rotated and tested.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { agent, apiClient, launchBrowser, openApp, openTab, runEnded, shoot, startFakeLLM, startServer } from './harness.mjs';

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
  // New York for the page, Berlin for the schedule: both clocks are shown.
  context = await browser.newContext({ viewport: { width: 1280, height: 860 }, timezoneId: 'America/New_York', locale: 'en-GB' });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.origin });
  call = apiClient(server);
  wsId = (await call('GET', '/api/workspaces')).current;
});
after(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
  await llm?.stop();
});

const ended = (runId) => runEnded(call, wsId, runId);

describe('automations', () => {
  let page;
  let ada;

  test('a daily schedule from a preset: its description and next times, Run now, pause', async () => {
    const board = await call('GET', `/api/workspaces/${wsId}/board`);
    ada = await call('POST', `/api/workspaces/${wsId}/agents`, { name: 'Ada Lovelace', box_id: board.boxes[0].id });
    page = await openApp(context, server);
    await agent(page, ada.handle).click();
    await openTab(page, 'Automations');
    const tab = page.getByTestId('automations-tab');
    await tab.getByTestId('schedules-empty').waitFor();
    await tab.getByTestId('triggers-empty').waitFor();
    assert.equal(await agent(page, ada.handle).getByTestId('agent-scheduled').count(), 0);

    await tab.getByTestId('new-schedule').click();
    const dlg = page.getByTestId('schedule-dialog');
    await dlg.getByLabel('Name', { exact: true }).fill('Morning digest');
    await dlg.getByLabel('Instruction', { exact: true }).fill('hello from the morning digest');
    await dlg.getByLabel('How often', { exact: true }).selectOption('weekdays');
    await dlg.getByLabel('How often', { exact: true }).selectOption('daily');
    await dlg.getByLabel('At', { exact: true }).fill('08:30');
    assert.equal(await dlg.getByLabel('Cron expression', { exact: true }).inputValue(), '30 8 * * *', 'the preset writes the expression');
    assert.equal(await dlg.getByLabel('Time zone', { exact: true }).inputValue(), 'America/New_York', "the browser's zone by default");
    await dlg.getByLabel('Time zone', { exact: true }).selectOption('Europe/Berlin');

    // The server describes it and lists the next 5 times, on Berlin's clock and New York's.
    const preview = dlg.getByTestId('schedule-preview');
    await preview.getByTestId('schedule-preview-description').filter({ hasText: /08:30/ }).waitFor();
    const described = (await preview.getByTestId('schedule-preview-description').textContent()).trim();
    const next = preview.getByTestId('schedule-preview-next').locator('li');
    assert.equal(await next.count(), 5);
    assert.match(await next.first().textContent(), /08:30.*\d\d:30 your time/);

    // Typing an expression that is a preset picks the preset.
    await dlg.getByLabel('Cron expression', { exact: true }).fill('0 9 * * 1');
    assert.equal(await dlg.getByLabel('How often', { exact: true }).inputValue(), 'weekly');
    assert.equal(await dlg.getByLabel('On', { exact: true }).inputValue(), '1');
    await dlg.getByLabel('How often', { exact: true }).selectOption('daily');
    await dlg.getByLabel('At', { exact: true }).fill('08:30');
    await preview.getByTestId('schedule-preview-description').filter({ hasText: described }).waitFor();
    await dlg.getByTestId('schedule-save').click();
    await dlg.waitFor({ state: 'detached' });

    const card = tab.getByTestId('schedule');
    await card.waitFor();
    assert.equal(await card.getByTestId('schedule-name').textContent(), 'Morning digest');
    assert.match(await card.getByTestId('schedule-description').textContent(), new RegExp(`${described}.*Berlin time`));
    assert.match(await card.getByTestId('schedule-next').locator('time').textContent(), /08:30/);
    assert.match(await card.getByTestId('schedule-next-local').textContent(), /\d\d:30 your time/);
    const [s] = await call('GET', `/api/workspaces/${wsId}/agents/${ada.id}/schedules`);
    assert.deepEqual([s.cron, s.timezone, s.kind, s.enabled], ['30 8 * * *', 'Europe/Berlin', 'cron', true]);

    // The board shows the clock badge.
    const badge = agent(page, ada.handle).getByTestId('agent-scheduled');
    await badge.waitFor();
    assert.equal(await badge.locator('title').textContent(), '1 scheduled task');

    // Run now: a manual fire in the history, with the run the fake model answered.
    await card.getByTestId('schedule-run-now').click();
    const fire = card.locator('[data-testid="fire"][data-outcome="manual"]');
    await fire.waitFor();
    assert.match(await fire.textContent(), /Manual/);
    const [f] = await call('GET', `/api/workspaces/${wsId}/schedules/${s.id}/history`);
    assert.equal(f.outcome, 'manual');
    const run = await ended(f.run_id);
    assert.equal(run.status, 'done');
    assert.equal(run.session_id, s.session_id, 'the schedule runs in its own session');
    await shoot(page, 'automations-schedule');

    await fire.getByTestId('fire-run').click();
    const logs = page.getByTestId('logs-tab');
    await logs.locator(`[data-testid="run-header"][data-run-id="${f.run_id}"]`).waitFor();
    await logs.locator('[data-testid="step"][data-kind="model"]').getByText(/You said:/).waitFor();

    // Pause it: no next time, marked paused, and so on the server.
    await openTab(page, 'Automations');
    await card.getByTestId('schedule-toggle').click();
    await card.getByTestId('schedule-paused').waitFor();
    assert.equal(await card.getByTestId('schedule-toggle').getAttribute('aria-checked'), 'false');
    // The next times are read again after the toggle: wait for them, not for one render.
    await card.getByTestId('schedule-next').filter({ hasText: /Paused/ }).waitFor();
    const [paused] = await call('GET', `/api/workspaces/${wsId}/agents/${ada.id}/schedules`);
    assert.equal(paused.enabled, false);
    assert.deepEqual(page.errors, []);
  });

  test("a cron the server cannot read shows its reason; edit and delete", async () => {
    const tab = page.getByTestId('automations-tab');
    await tab.getByTestId('new-schedule').click();
    const dlg = page.getByTestId('schedule-dialog');
    await dlg.getByLabel('Name', { exact: true }).fill('Broken');
    await dlg.getByLabel('Instruction', { exact: true }).fill('never runs');
    await dlg.getByLabel('Cron expression', { exact: true }).fill('0 9 * *');
    assert.equal(await dlg.getByLabel('How often', { exact: true }).inputValue(), 'custom');
    const error = dlg.getByTestId('schedule-preview-error');
    await error.waitFor();
    const said = await fetch(`${server.origin}/api/schedules/preview`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${new URL(server.url).searchParams.get('token')}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ kind: 'cron', cron: '0 9 * *', timezone: 'America/New_York', at: null }),
    });
    assert.equal(said.status, 400);
    assert.equal((await error.textContent()).trim(), (await said.json()).error, "the server's own words");
    await shoot(page, 'automations-cron-error');

    // Saving anyway is refused with the same reason; nothing is created.
    await dlg.getByTestId('schedule-save').click();
    await dlg.getByTestId('schedule-save-error').waitFor();
    assert.equal((await call('GET', `/api/workspaces/${wsId}/agents/${ada.id}/schedules`)).length, 1);

    // Once: tomorrow at 09:00 to start with, previewed the same way.
    await dlg.getByText('Once', { exact: true }).click();
    assert.match(await dlg.getByLabel('Date and time', { exact: true }).inputValue(), /^\d{4}-\d\d-\d\dT09:00$/);
    await dlg.getByTestId('schedule-preview-description').waitFor();
    assert.match(await dlg.getByTestId('schedule-preview-next').textContent(), /09:00/);
    await dlg.getByRole('button', { name: 'Cancel' }).click();
    await dlg.waitFor({ state: 'detached' });

    // Edit: the dialog opens on the schedule's values.
    const card = tab.getByTestId('schedule');
    await card.getByTestId('schedule-edit').click();
    assert.equal(await dlg.getByLabel('Name', { exact: true }).inputValue(), 'Morning digest');
    assert.equal(await dlg.getByLabel('Time zone', { exact: true }).inputValue(), 'Europe/Berlin');
    assert.equal(await dlg.getByLabel('At', { exact: true }).inputValue(), '08:30');
    await dlg.getByLabel('Name', { exact: true }).fill('Morning digest (weekdays)');
    await dlg.getByLabel('How often', { exact: true }).selectOption('weekdays');
    await dlg.getByTestId('schedule-save').click();
    await dlg.waitFor({ state: 'detached' });
    await card.getByTestId('schedule-name').getByText('Morning digest (weekdays)').waitFor();
    const [edited] = await call('GET', `/api/workspaces/${wsId}/agents/${ada.id}/schedules`);
    assert.equal(edited.cron, '30 8 * * 1-5');

    // Delete asks first.
    await card.getByTestId('schedule-delete').click();
    const confirm = page.getByTestId('delete-schedule-dialog');
    await confirm.getByRole('button', { name: 'Delete schedule' }).click();
    await confirm.waitFor({ state: 'detached' });
    await tab.getByTestId('schedules-empty').waitFor();
    await agent(page, ada.handle).getByTestId('agent-scheduled').waitFor({ state: 'detached' });
    assert.deepEqual(page.errors, []);
  });

  test('a trigger: its URL once, a call from outside, rotation, a test with an edited payload', async () => {
    const tab = page.getByTestId('automations-tab');
    await tab.getByTestId('new-trigger').click();
    const dlg = page.getByTestId('trigger-dialog');
    await dlg.getByLabel('Name', { exact: true }).fill('New order');
    await dlg.getByLabel('Instruction', { exact: true }).fill('Thank the customer for the order.');
    await dlg.getByTestId('trigger-save').click();
    await dlg.waitFor({ state: 'detached' });

    const card = tab.getByTestId('trigger');
    const reveal = card.getByTestId('trigger-url-reveal');
    await reveal.waitFor();
    const url = await reveal.getByTestId('trigger-url').inputValue();
    assert.ok(url.startsWith(`${server.origin}/hooks/`), url);
    assert.ok(url.startsWith((await card.getByTestId('trigger-url-prefix').textContent()).replace(/…$/, '')), 'the prefix is the URL’s beginning');
    assert.match(await reveal.getByTestId('trigger-curl').textContent(), new RegExp(`curl -X POST ${url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    await reveal.getByTestId('copy-trigger-url').click();
    await reveal.getByTestId('copy-trigger-url').filter({ hasText: 'Copied ✓' }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), url);
    await agent(page, ada.handle).getByTestId('agent-triggered').waitFor();
    assert.match(await card.getByTestId('trigger-methods').textContent(), /POST/);

    // A service calls it (no UI token): the delivery shows up live, with its run.
    await card.getByTestId('trigger-deliveries-toggle').click();
    await card.getByTestId('trigger-deliveries').getByText('No calls yet').waitFor();
    const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ order: 41, item: 'tea' }) });
    assert.equal(res.status, 202);
    const { run_id: runId } = await res.json();
    assert.ok(runId);
    const row = card.locator('[data-testid="delivery"][data-status="202"]');
    await row.waitFor();
    assert.match(await row.textContent(), /POST/);
    const run = await ended(runId);
    assert.equal(run.status, 'done');
    assert.match(run.output, /You said:/);
    await shoot(page, 'automations-trigger');

    await row.getByTestId('delivery-run').click();
    await page.getByTestId('logs-tab').locator(`[data-testid="run-header"][data-run-id="${runId}"]`).waitFor();
    await openTab(page, 'Automations');

    // Rotate at once: a new URL shown once; the old one answers 404.
    await card.getByTestId('trigger-rotate').click();
    const rot = page.getByTestId('trigger-rotate-dialog');
    assert.equal(await rot.getByLabel('Stop the old URL now').isChecked(), true);
    await rot.getByTestId('trigger-rotate-confirm').click();
    await rot.waitFor({ state: 'detached' });
    await page.waitForFunction((old) => document.querySelector('[data-testid="trigger-url"]')?.value !== old, url);
    const fresh = await reveal.getByTestId('trigger-url').inputValue();
    assert.notEqual(fresh, url);
    assert.equal((await fetch(url, { method: 'POST', body: '{}' })).status, 404);
    assert.equal((await fetch(fresh, { method: 'POST', body: '{}' })).status, 202);
    await reveal.getByRole('button', { name: 'Done' }).click();
    await reveal.waitFor({ state: 'detached' });

    // Rotate with a grace period: the previous URL keeps working for an hour.
    await card.getByTestId('trigger-rotate').click();
    await rot.getByLabel('Keep the old URL working for 1 hour').check();
    await rot.getByTestId('trigger-rotate-confirm').click();
    await rot.waitFor({ state: 'detached' });
    const third = await reveal.getByTestId('trigger-url').inputValue();
    assert.notEqual(third, fresh);
    await card.getByTestId('trigger-grace').waitFor();
    assert.equal((await fetch(fresh, { method: 'POST', body: '{}' })).status, 202);
    assert.equal((await fetch(third, { method: 'POST', body: '{}' })).status, 202);
    await reveal.getByRole('button', { name: 'Done' }).click();
    await reveal.waitFor({ state: 'detached' });

    // Test with an edited payload: a broken JSON is caught first.
    await card.getByTestId('trigger-test').click();
    const test = page.getByTestId('trigger-test-dialog');
    const payload = test.getByTestId('trigger-test-payload');
    await payload.fill('{"order": 42,');
    await test.getByTestId('trigger-test-invalid').waitFor();
    assert.equal(await test.getByTestId('trigger-test-send').isDisabled(), true);
    await payload.fill('{"order": 42, "item": "coffee"}');
    await test.getByTestId('trigger-test-send').click();
    const result = test.getByTestId('trigger-test-result');
    await result.waitFor();
    assert.match(await result.textContent(), /test/);
    await shoot(page, 'automations-test');
    await test.getByTestId('trigger-test-run').click();
    await test.waitFor({ state: 'detached' });
    const header = page.getByTestId('logs-tab').getByTestId('run-header');
    await header.waitFor();
    const testRun = await ended(await header.getAttribute('data-run-id'));
    assert.match(testRun.input, /coffee/, 'the edited payload reached the agent');
    await openTab(page, 'Automations');
    await card.locator('[data-testid="delivery"][data-outcome="test"]').waitFor();

    // Pause: calls get 503.
    await card.getByTestId('trigger-toggle').click();
    await card.getByTestId('trigger-paused').waitFor();
    assert.equal((await fetch(third, { method: 'POST', body: '{}' })).status, 503);
    assert.deepEqual(page.errors, []);
  });
});
