// Human in the loop against a real `rerun serve` and the fake model server:
// the four pause cards answered in the chat, the ask-first policy, variables,
// and notifications reaching the bell, a toast and the To handle tab.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { agent, apiClient, launchBrowser, openApp, openTab, shoot, shotPath, startFakeLLM, startServer } from './harness.mjs';

let llm;
let server;
let browser;
let context;
let call;
let wsId;

before(async () => {
  // Variables are sealed with a key file in the data folder, never this computer's keychain.
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

/** Types a message in the Chat tab and sends it with Enter. */
async function say(page, text) {
  const input = page.getByTestId('chat-input');
  await input.fill(text);
  await input.press('Enter');
}

/** Makes the fake model call a tool with these arguments, once the last run ended. */
async function useTool(page, name, args) {
  await page.getByTestId('chat-status').waitFor({ state: 'detached' });
  await say(page, `use tool ${name} ${JSON.stringify(args)}`);
}

const card = (page, kind) => page.locator(`[data-testid="pause-card"][data-kind="${kind}"]`);

describe('human in the loop', () => {
  let page;
  let ada;

  test('a 2-question card: pick, type, send; the run goes on to its next reply', async () => {
    const board = await call('GET', `/api/workspaces/${wsId}/board`);
    ada = await call('POST', `/api/workspaces/${wsId}/agents`, {
      name: 'Ada Lovelace',
      box_id: board.boxes[0].id,
      capabilities: ['files', 'shell', 'human'],
    });
    page = await openApp(context, server);
    await agent(page, ada.handle).click();
    await page.getByTestId('chat-tab').waitFor();

    await useTool(page, 'ask_question', {
      questions: [
        { question: 'Which region should the new bucket live in?', header: 'Region', options: ['EU (Frankfurt)', 'US (Virginia)', 'Asia (Tokyo)'] },
        { question: 'Who should hear when it is ready?', options: ['Email', 'Slack', 'SMS'], multiple: true },
      ],
    });
    const q = card(page, 'question');
    await q.waitFor();
    assert.equal(await page.getByTestId('chat-input').count(), 0, 'the card replaces the message box');
    assert.match(await q.locator('h3').textContent(), /2 questions for you/);
    assert.equal(await q.getByTestId('question').count(), 2);
    const submit = q.getByTestId('pause-submit');
    assert.equal(await submit.isDisabled(), true);
    await page.getByTestId('chat-status').getByText('Waiting for you').waitFor();
    await page.getByTestId('chat-pause').getByText('Asked you 2 questions').waitFor();

    // The board marks Ada as waiting and the bell counts the question.
    await agent(page, ada.handle).locator('[data-testid="agent-waiting"]').waitFor();
    assert.equal(await agent(page, ada.handle).getAttribute('data-waiting'), 'true');
    await page.getByTestId('bell-count').getByText('1').waitFor();

    const [first, second] = [q.getByTestId('question').nth(0), q.getByTestId('question').nth(1)];
    await first.getByRole('button', { name: 'US (Virginia)' }).click();
    await first.getByRole('button', { name: 'EU (Frankfurt)' }).click();
    assert.equal(await first.getByRole('button', { name: 'EU (Frankfurt)' }).getAttribute('aria-pressed'), 'true');
    assert.equal(await first.getByRole('button', { name: 'US (Virginia)' }).getAttribute('aria-pressed'), 'false');
    assert.equal(await submit.isDisabled(), true, 'the second question has no answer yet');
    await second.getByRole('button', { name: 'Email' }).click();
    await second.getByRole('button', { name: 'Slack' }).click();
    await second.getByTestId('other').fill('a pager');
    assert.equal(await submit.isDisabled(), false);
    await shoot(page, 'pause-question');

    await submit.click();
    await q.waitFor({ state: 'detached' });
    await page.getByTestId('msg-agent').filter({ hasText: 'Tool said: The person answered' }).waitFor();
    const resume = page.getByTestId('transcript').getByTestId('chat-resume');
    await resume.getByText('You answered').waitFor();
    assert.match(await resume.textContent(), /EU \(Frankfurt\)/);
    assert.match(await resume.textContent(), /Email, Slack, a pager/);
    await page.getByTestId('chat-input').waitFor();
    assert.equal(await page.getByTestId('tool-row').filter({ hasText: 'ask_question' }).count(), 0, 'the pause rows stand for the tool call');
    await agent(page, ada.handle).locator('[data-testid="agent-waiting"]').waitFor({ state: 'detached' });
    assert.deepEqual(page.errors, []);
  });

  test('an approval of 3 actions: approve 2, decline 1; the declined one never runs', async () => {
    await useTool(page, 'request_approval', {
      title: 'Tidy the release folder',
      reason: 'The disk is almost full and these are the largest leftovers.',
      items: [
        { title: 'Print the first marker', kind: 'command', detail: 'echo marker-one', tool: 'run_command', input: { command: 'echo marker-one' } },
        { title: 'Print the second marker', kind: 'target', detail: 'releases/2024-old/ (3.1 GB)', tool: 'run_command', input: { command: 'echo marker-two' } },
        {
          title: 'Update the retention rule',
          kind: 'diff',
          detail: '--- a/retention.yml\n+++ b/retention.yml\n@@ -1,3 +1,3 @@\n keep:\n-  days: 90\n+  days: 30\n   min: 3',
          tool: 'run_command',
          input: { command: 'echo marker-three' },
        },
      ],
    });
    const a = card(page, 'approval');
    await a.waitFor();
    assert.equal(await a.getByTestId('approval-item').count(), 3);
    await a.getByTestId('detail-command').getByText('echo marker-one').waitFor();
    await a.getByTestId('detail-target').getByText('releases/2024-old/').waitFor();
    const diff = a.getByTestId('diff');
    assert.equal(await diff.locator('[data-kind="add"]').count(), 1);
    assert.equal(await diff.locator('[data-kind="del"]').count(), 1);
    assert.equal(await diff.locator('[data-kind="hunk"]').count(), 1);
    const submit = a.getByTestId('pause-submit');
    assert.equal(await submit.isDisabled(), true);

    await a.getByTestId('approve-all').click();
    const second = a.getByTestId('approval-item').nth(1);
    await second.getByTestId('decline').click();
    await second.getByRole('textbox').fill('keep the old releases for now');
    assert.equal(await second.getAttribute('data-decision'), 'declined');
    assert.equal(await submit.isDisabled(), false);
    await shoot(page, 'pause-approval');
    await a.getByTestId('approval-item').nth(2).screenshot({ path: shotPath('pause-approval-diff.png') });

    await submit.click();
    await a.waitFor({ state: 'detached' });
    await page.getByTestId('msg-agent').filter({ hasText: /Tool said: The person's decisions/ }).waitFor();
    const approved = page.getByTestId('tool-row').filter({ has: page.getByTestId('tool-decision') });
    await approved.nth(1).waitFor();
    assert.equal(await approved.count(), 2);
    assert.equal(await page.locator('[data-testid="tool-row"][data-decision="approved"]').count(), 2);
    await page.getByTestId('transcript').getByTestId('chat-resume').getByText('You approved 2 and declined 1').waitFor();

    // Logs show the pause and the decisions too.
    await openTab(page, 'Logs');
    const logs = page.getByTestId('logs-tab');
    await logs.locator('[data-testid="step"][data-kind="resume"]').getByText('You approved 2 and declined 1').waitFor();
    assert.equal(await logs.getByTestId('step-decision').count(), 2);
    await page.screenshot({ path: shotPath('logs-approval.png') });
    await openTab(page, 'Chat');

    // The declined command never ran: no tool call carries it.
    const runs = await call('GET', `/api/workspaces/${wsId}/agents/${ada.id}/runs`);
    const detail = await call('GET', `/api/workspaces/${wsId}/runs/${runs[0].id}`);
    assert.equal(detail.status, 'done');
    const commands = detail.steps.filter((s) => s.kind === 'tool_call' && s.data.name === 'run_command').map((s) => s.data.input.command);
    assert.deepEqual(commands.sort(), ['echo marker-one', 'echo marker-three']);
    assert.deepEqual(page.errors, []);
  });

  test('ask first: a shell command waits for approval; the switch lives in Settings', async () => {
    await say(page, 'use tool run_command {"command":"echo policy-ok"}');
    const a = card(page, 'approval');
    await a.waitFor();
    await a.getByTestId('policy-badge').waitFor();
    await a.getByTestId('detail-command').getByText('echo policy-ok').waitFor();
    await page.screenshot({ path: shotPath('pause-policy.png') });
    await a.getByTestId('approve').click();
    await a.getByTestId('pause-submit').click();
    await a.waitFor({ state: 'detached' });
    const row = page.locator('[data-testid="tool-row"][data-decision="approved"]').filter({ hasText: 'policy-ok' });
    await row.waitFor();
    await page.getByTestId('msg-agent').filter({ hasText: /Tool said:.*policy-ok/ }).waitFor();

    await openTab(page, 'Settings');
    const section = page.getByTestId('ask-first');
    await section.getByText('Rerun shows you an approval card before the agent uses these tools').waitFor();
    const shell = section.locator('[role="switch"][data-ask-first="shell"]');
    assert.equal(await shell.getAttribute('aria-checked'), 'true');
    assert.match(await shell.textContent(), /Shell/);
    await shell.click();
    await page.getByTestId('agent-panel').getByRole('button', { name: 'Save' }).click();
    await page.getByTestId('save-status').getByText('Saved').waitFor();
    const saved = await call('GET', `/api/workspaces/${wsId}/agents/${ada.id}`);
    assert.equal(saved.ask_first.shell, false);
    assert.equal(saved.ask_first.database, true, 'the other switches keep theirs');
    await section.screenshot({ path: shotPath('ask-first.png') });
    await openTab(page, 'Chat');
  });

  test('a credential form: the value goes into Variables and never into the page', async () => {
    const SECRET = 'sk_live_canary_7f3a9c1e';
    await useTool(page, 'request_credential', {
      variable: 'STRIPE_KEY',
      label: 'Stripe secret key',
      description: 'Ada reads last month’s invoices with it.',
      url: 'https://dashboard.stripe.com/apikeys',
    });
    const c = card(page, 'credential');
    await c.waitFor();
    await c.getByText('the agent only learns that ${STRIPE_KEY} was filled').waitFor();
    const field = c.getByTestId('credential-value');
    assert.equal(await field.getAttribute('type'), 'password');

    // The server's refusal shows inline.
    await field.fill('abc');
    await c.getByTestId('pause-submit').click();
    await c.getByTestId('pause-error').getByText(/shorter than 4/).waitFor();

    await field.fill(SECRET);
    await shoot(page, 'pause-credential');
    await c.getByTestId('pause-submit').click();
    await c.waitFor({ state: 'detached' });
    await page.getByTestId('transcript').getByTestId('chat-resume').getByText('You filled ${STRIPE_KEY}').waitFor();
    await page.getByTestId('msg-agent').filter({ hasText: /Tool said:/ }).last().waitFor();

    const noSecret = async () => {
      assert.ok(!(await page.content()).includes(SECRET), 'the value is nowhere in the page');
      const values = await page.$$eval('input', (els) => els.map((e) => e.value));
      assert.ok(!values.includes(SECRET), 'no field still holds it');
    };
    await noSecret();

    await page.getByTestId('open-settings').click();
    await page.getByRole('menuitem', { name: /^Variables/ }).click();
    const dlg = page.getByTestId('variables-dialog');
    await dlg.locator('[data-testid="variable-row"][data-name="STRIPE_KEY"]').waitFor();
    await dlg.getByTestId('key-store-note').waitFor();
    await noSecret();
    await shoot(page, 'variables-dialog');

    // Add one by hand, then delete it.
    await dlg.getByLabel('Name').fill('github token');
    assert.equal(await dlg.getByLabel('Name').inputValue(), 'GITHUB_TOKEN');
    await dlg.getByTestId('variable-value').fill('ghp_canary_0123456789');
    await dlg.getByRole('button', { name: 'Add', exact: true }).click();
    const row = dlg.locator('[data-testid="variable-row"][data-name="GITHUB_TOKEN"]');
    await row.waitFor();
    assert.equal(await dlg.getByTestId('variable-value').inputValue(), '', 'the typed value is forgotten');
    assert.ok(!(await page.content()).includes('ghp_canary_0123456789'));
    await row.getByRole('button', { name: 'Delete' }).click();
    await page.getByTestId('delete-variable-dialog').getByRole('button', { name: 'Delete variable' }).click();
    await row.waitFor({ state: 'detached' });
    await dlg.getByRole('button', { name: 'Close' }).click();

    const transcript = await call('GET', `/api/workspaces/${wsId}/sessions/${(await call('GET', `/api/workspaces/${wsId}/agents/${ada.id}/sessions`))[0].id}`);
    assert.ok(!JSON.stringify(transcript).includes(SECRET), 'the transcript never holds the value');
    assert.deepEqual(page.errors, []);
  });

  test('a connector card carries its setup form', async () => {
    await useTool(page, 'request_connector', {
      connector: 'Acme Code',
      title: 'Connect Acme Code',
      description: 'Ada needs read access to your Acme Code repositories to review pull requests.',
      fields: [
        { name: 'org', label: 'Organisation', type: 'text', required: true },
        { name: 'api_url', label: 'API address', type: 'url' },
        { name: 'scope', label: 'Access', type: 'select', required: true, options: ['read', 'read and write'] },
        { name: 'token', label: 'Personal access token', type: 'secret', required: true },
      ],
    });
    const c = card(page, 'connector');
    await c.waitFor().catch(async (err) => {
      await page.screenshot({ path: shotPath('debug-connector.png') });
      throw err;
    });
    const submit = c.getByTestId('pause-submit');
    await c.getByLabel('Organisation').fill('acme');
    await c.getByLabel('API address').fill('github.com');
    await c.getByText('Enter a full address starting with https://').waitFor();
    await c.getByLabel('API address').fill('https://api.github.com');
    await c.locator('select').selectOption('read');
    assert.equal(await submit.isDisabled(), true, 'the token is required');
    await c.getByLabel('Personal access token').fill('ghp_connector_canary_42');
    assert.equal(await c.getByLabel('Personal access token').getAttribute('type'), 'password');
    await c.getByRole('button', { name: 'Show the value' }).click();
    assert.equal(await c.getByLabel('Personal access token').getAttribute('type'), 'text');
    await c.getByRole('button', { name: 'Hide the value' }).click();
    await shoot(page, 'pause-connector');
    await submit.click();
    await c.waitFor({ state: 'detached' });
    const resume = page.getByTestId('transcript').getByTestId('chat-resume').filter({ hasText: 'You connected Acme Code' });
    await resume.waitFor();
    assert.match(await resume.textContent(), /acme/);
    assert.ok(!(await page.content()).includes('ghp_connector_canary_42'));
  });

  test('a notification reaches a toast, the bell and To handle; a pause there opens its chat', async () => {
    await useTool(page, 'notify', { kind: 'done', title: 'Invoice report ready', body: 'Saved as reports/invoices.md' });
    await page.getByTestId('toast').filter({ hasText: 'Ada Lovelace: Invoice report ready' }).waitFor();
    await page.getByTestId('bell-count').getByText('1').waitFor();

    // A question waits too: the bell counts both.
    await useTool(page, 'ask_question', { questions: [{ question: 'Ship it today?', options: ['Yes', 'No'] }] });
    await card(page, 'question').waitFor();
    await page.getByTestId('bell-count').getByText('2').waitFor();

    // A paused run reads "waiting for you" in Monitoring.
    await openTab(page, 'Monitoring');
    await page.getByTestId('run-row').first().getByText('waiting for you').waitFor();

    await page.getByTestId('bell').click();
    const panel = page.getByTestId('notifications-panel');
    await page.keyboard.press('Escape');
    await panel.waitFor({ state: 'detached' });
    await page.getByTestId('agent-panel').waitFor(); // Escape closed the popover only
    await page.getByTestId('bell').click();
    await panel.getByTestId('notification').filter({ hasText: 'Invoice report ready' }).waitFor();
    const rows = await panel.getByTestId('notification').allTextContents();
    assert.match(rows[0], /Ada Lovelace/);
    assert.match(rows[0], /question/i, 'newest first');
    await shoot(page, 'notifications-panel');
    await panel.getByTestId('notification').filter({ hasText: 'Invoice report ready' }).getByRole('button').first().click();
    await panel.waitFor({ state: 'detached' });

    const tab = page.getByTestId('tab-handle');
    assert.equal(await tab.getAttribute('aria-selected'), 'true');
    await page.getByTestId('tohandle-count').getByText('2').waitFor();
    const list = page.getByTestId('tohandle-open');
    await list.getByTestId('notification').filter({ hasText: 'Invoice report ready' }).waitFor();
    await list.getByTestId('tohandle-pause').waitFor();
    await shoot(page, 'tohandle');

    await list.getByTestId('notification').filter({ hasText: 'Invoice report ready' }).getByTestId('dismiss').click();
    await list.getByTestId('notification').waitFor({ state: 'detached' });
    await page.getByTestId('tohandle-count').getByText('1').waitFor();
    await page.getByTestId('bell-count').getByText('1').waitFor();
    await page.getByTestId('tohandle-handled').locator('summary').click();
    await page.getByTestId('tohandle-handled').getByText('Invoice report ready').waitFor();

    await list.getByTestId('tohandle-pause').getByRole('button').first().click();
    assert.equal(await page.getByTestId('tab-chat').getAttribute('aria-selected'), 'true');
    const q = card(page, 'question');
    await q.getByRole('button', { name: 'Yes' }).click();
    await q.getByTestId('pause-submit').click();
    await q.waitFor({ state: 'detached' });
    await page.getByTestId('bell-count').waitFor({ state: 'detached' });
    await page.getByTestId('tohandle-count').waitFor({ state: 'detached' });
    assert.deepEqual(page.errors, []);
  });

  test('Settings → Notifications saves the delivery matrix', async () => {
    await page.getByTestId('open-settings').click();
    await page.getByRole('menuitem', { name: /^Notifications/ }).click();
    const dlg = page.getByTestId('notification-settings-dialog');
    const box = dlg.getByTestId('delivery-progress-automated-in_app');
    await box.waitFor();
    const before = await box.isChecked();
    assert.equal(await dlg.getByTestId('delivery-save').isDisabled(), true);
    await box.click();
    await dlg.getByText('Unsaved changes').waitFor();
    await shoot(page, 'notification-settings');
    await dlg.getByTestId('delivery-save').click();
    await dlg.getByText('✓ Saved').waitFor();
    const saved = await call('GET', `/api/workspaces/${wsId}/settings/notifications`);
    assert.equal(saved.progress.automated.in_app, !before);
    await dlg.getByRole('button', { name: 'Close', exact: true }).first().click();
    await dlg.waitFor({ state: 'detached' });
    assert.deepEqual(page.errors, []);
  });
});
