// Templates against a real `rerun serve` and the fake model server: an agent
// with a skill, a schedule, a file, a memory and a variable in its soul is saved
// as a template from its menu (the preview says what goes in and what is left
// out), installed into another box (the new agent opens on the card asking for
// the variable), exported, imported back, and a broken file is refused.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { agent, apiClient, launchBrowser, openApp, runEnded, shoot, startFakeLLM, startServer } from './harness.mjs';

let llm;
let server;
let browser;
let context;
let call;
let wsId;

const MEMORY = 'The CEO private phone is 555-0199';

before(async () => {
  process.env.RERUN_KEYCHAIN = 'off';
  llm = await startFakeLLM();
  server = await startServer({ llm });
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 860 }, acceptDownloads: true });
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

/** Sales Scout: a soul that refers to ${HUBSPOT_TOKEN}, a skill, a schedule, a file and a memory. */
async function salesScout() {
  const board = await call('GET', `/api/workspaces/${wsId}/board`);
  const scout = await call('POST', `/api/workspaces/${wsId}/agents`, {
    name: 'Sales Scout',
    box_id: board.boxes[0].id,
    soul: 'You find new leads in HubSpot with ${HUBSPOT_TOKEN} and write a short morning digest.',
    capabilities: ['files'],
  });
  await call('PUT', `/api/workspaces/${wsId}/agents/${scout.id}/skills/lead-triage`, {
    skill_md: '---\nname: lead-triage\ndescription: Sorts new leads by fit\n---\n# Lead triage\n\nScore each lead 1-5.\n',
  });
  await call('POST', `/api/workspaces/${wsId}/agents/${scout.id}/schedules`, {
    name: 'Morning digest',
    instruction: 'hello, write the digest',
    kind: 'cron',
    cron: '0 9 * * 1-5',
    timezone: 'Europe/Berlin',
  });
  const run = await call('POST', `/api/workspaces/${wsId}/agents/${scout.id}/messages`, {
    text: `use tool write_file ${JSON.stringify({ path: 'playbook.md', content: '# Playbook\n\nCall within a day.\n' })}`,
  });
  assert.equal((await ended(run.id)).status, 'done');
  await call('POST', `/api/workspaces/${wsId}/agents/${scout.id}/memories`, { text: MEMORY });
  return scout;
}

describe('templates', () => {
  let page;
  let scout;
  let sales;
  let exported;

  test('the library starts empty and says how to make one', async () => {
    scout = await salesScout();
    sales = await call('POST', `/api/workspaces/${wsId}/boxes`, { name: 'Sales' });
    page = await openApp(context, server);
    await page.getByTestId('open-templates').click();
    const lib = page.getByTestId('templates-dialog');
    await lib.getByTestId('templates-empty').getByText('Your install starts with none').waitFor();
    await lib.getByTestId('templates-empty').getByText('Save as template…').waitFor();
    await page.keyboard.press('Escape');
    await lib.waitFor({ state: 'detached' });
  });

  test('save as template from the agent menu: the preview, then the card in the library', async () => {
    await agent(page, scout.handle).click({ button: 'right' });
    await page.getByRole('menuitem', { name: 'Save as template…' }).click();
    const dlg = page.getByTestId('save-template-dialog');
    assert.equal(await dlg.getByLabel('Name').inputValue(), 'Sales Scout');

    // What goes in, grouped, and what is left out, as the server says it.
    const inc = dlg.getByTestId('preview-included');
    await inc.getByText('lead-triage').waitFor();
    await inc.getByText(/Scheduled task “Morning digest”.*installed paused/).waitFor();
    await inc.getByText(/^1 \(/).waitFor(); // Files: 1 (… bytes)
    await inc.getByText(/HUBSPOT_TOKEN \(never their values/).waitFor();
    const out = dlg.getByTestId('preview-left-out');
    await out.getByText('Memories', { exact: true }).waitFor();
    await out.getByText(/Values of variables/).waitFor();
    const said = await call('GET', `/api/workspaces/${wsId}/agents/${scout.id}/template-preview`);
    assert.equal(await out.getByTestId('preview-line').count(), said.left_out.length);
    assert.equal(await inc.getByTestId('preview-line').count(), said.included.length);

    await dlg.getByLabel('Description').fill('Finds new leads in HubSpot and writes a morning digest.');
    await dlg.getByLabel('Category').fill('Sales');
    await shoot(page, 'template-save');
    await dlg.getByTestId('save-template').click();
    await dlg.getByTestId('template-saved').getByText('Sales Scout').waitFor();
    const [t] = await call('GET', `/api/workspaces/${wsId}/templates`);
    assert.deepEqual([t.name, t.category, t.description], ['Sales Scout', 'Sales', 'Finds new leads in HubSpot and writes a morning digest.']);

    await dlg.getByTestId('open-library').click();
    const card = page.getByTestId('templates-dialog').getByTestId('template');
    await card.waitFor();
    assert.equal(await card.getByTestId('template-name').textContent(), 'Sales Scout');
    assert.match(await card.getByTestId('template-meta').textContent(), /Sales/);
    assert.equal(await card.getByTestId('template-description').textContent(), 'Finds new leads in HubSpot and writes a morning digest.');
    assert.equal((await card.getByTestId('template-variables').textContent()).trim(), '${HUBSPOT_TOKEN}');
    assert.equal(await card.getByTestId('template-comes').textContent(), '1 skill · 1 schedule, installed paused · 1 file');
    await shoot(page, 'templates-library');
    assert.deepEqual(page.errors, []);
  });

  test('install into another box: the new agent opens on the card asking for the variable', async () => {
    const lib = page.getByTestId('templates-dialog');
    await lib.getByTestId('template-install').click();
    const dlg = page.getByTestId('install-template-dialog');
    await dlg.getByTestId('install-asks').getByText('${HUBSPOT_TOKEN}').waitFor();
    await dlg.getByTestId('install-asks').getByText(/its schedule.*installed paused/).waitFor();
    await dlg.getByLabel('Box').selectOption({ label: 'Sales' });
    await dlg.getByTestId('install-confirm').click();
    await lib.waitFor({ state: 'detached' });

    // The new agent is on the board, in Sales, with a handle of its own.
    const panel = page.getByTestId('agent-panel');
    await panel.getByTestId('panel-agent-name').getByText('Sales Scout').waitFor();
    const newId = await panel.getAttribute('data-agent-id');
    assert.notEqual(newId, scout.id);
    const made = await call('GET', `/api/workspaces/${wsId}/agents/${newId}`);
    assert.notEqual(made.handle, scout.handle);
    assert.equal(made.box_id, sales.id);
    await agent(page, made.handle).waitFor();

    // It opens on To handle: the credential card, and the paused schedule's notice.
    assert.equal(await panel.getByRole('tab', { name: /To handle/ }).getAttribute('aria-selected'), 'true');
    const row = panel.locator('[data-testid="tohandle-pause"][data-kind="credential"]');
    await row.waitFor();
    assert.match(await row.textContent(), /HUBSPOT_TOKEN/);
    await panel.locator('[data-testid="notification"]').getByText('Automations installed paused').waitFor();
    const toast = page.getByTestId('toast').filter({ hasText: 'is on the board' });
    await toast.getByText(/Enter HUBSPOT_TOKEN/).waitFor();
    assert.match(await toast.textContent(), new RegExp(`@${made.handle}.*paused until you turn it on`));
    await page.getByTestId('bell-count').waitFor();

    const [sched] = await call('GET', `/api/workspaces/${wsId}/agents/${newId}/schedules`);
    assert.deepEqual([sched.name, sched.enabled], ['Morning digest', false]);
    const skills = await call('GET', `/api/workspaces/${wsId}/agents/${newId}/skills`);
    assert.deepEqual(skills.map((s) => s.name), ['lead-triage']);
    const memories = await call('GET', `/api/workspaces/${wsId}/agents/${newId}/memories`);
    assert.equal(memories.length, 0, 'memories never travel');
    await shoot(page, 'template-installed');
    const toasts = page.getByTestId('toast');
    while ((await toasts.count()) > 0) await toasts.first().getByRole('button', { name: 'Dismiss' }).click();

    // The card takes the value like any credential card; it goes into Variables.
    await row.getByRole('button', { name: /Answer in the chat/ }).click();
    const c = panel.locator('[data-testid="pause-card"][data-kind="credential"]');
    await c.getByTestId('credential-value').fill('pat-na1-canary-0000');
    await c.getByTestId('pause-submit').click();
    await c.waitFor({ state: 'detached' });
    const vars = await call('GET', `/api/workspaces/${wsId}/variables`);
    assert.ok(vars.variables.some((v) => v.name === 'HUBSPOT_TOKEN'));
    assert.deepEqual(page.errors, []);
  });

  test('export downloads the file; importing it back shows a second template', async () => {
    await page.getByTestId('open-templates').click();
    const lib = page.getByTestId('templates-dialog');
    const card = lib.getByTestId('template');
    await card.waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), card.getByTestId('template-export').click()]);
    assert.equal(download.suggestedFilename(), 'Sales-Scout.rerun-template', 'the name the server gives it');
    exported = await download.path();
    const bytes = readFileSync(exported);
    assert.equal(bytes.subarray(0, 2).toString(), 'PK', 'a zip');
    assert.ok(!bytes.includes(MEMORY), 'the memory is not in the file');

    await lib.getByTestId('template-import-input').setInputFiles(exported);
    await lib.getByTestId('templates-notice').getByText('Imported Sales Scout.').waitFor();
    await lib.locator('[data-testid="template"]').nth(1).waitFor();
    assert.equal(await lib.getByTestId('template').count(), 2);
    assert.equal(await lib.getByTestId('template-import-error').count(), 0);
    assert.deepEqual(page.errors, []);
  });

  test('a broken file is refused with the server’s reason; delete asks first', async () => {
    const lib = page.getByTestId('templates-dialog');
    const broken = Buffer.from('this is not a zip');
    await lib.getByTestId('template-import-input').setInputFiles({ name: 'broken.rerun-template', mimeType: 'application/zip', buffer: broken });
    const error = lib.getByTestId('template-import-error');
    await error.waitFor();
    const token = new URL(server.url).searchParams.get('token');
    const res = await fetch(`${server.origin}/api/workspaces/${wsId}/templates/import`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/zip' },
      body: broken,
    });
    assert.equal(res.status, 400);
    const { error: reason } = await res.json();
    assert.equal(await error.textContent(), `Could not import broken.rerun-template: ${reason}`);
    assert.equal(await lib.getByTestId('template').count(), 2, 'nothing half-imported');
    await shoot(page, 'templates-import-error');

    await lib.getByTestId('template-delete').last().click();
    const confirm = page.getByTestId('delete-template-dialog');
    await confirm.getByRole('button', { name: 'Delete template' }).click();
    await confirm.waitFor({ state: 'detached' });
    await lib.getByTestId('templates-notice').getByText('Deleted Sales Scout.').waitFor();
    assert.equal(await lib.getByTestId('template').count(), 1);
    assert.equal((await call('GET', `/api/workspaces/${wsId}/templates`)).length, 1);
    assert.deepEqual(page.errors, []);
  });
});
