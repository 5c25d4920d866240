// Settings → Relay against a real rerun-relay process beside `rerun serve`: link
// with the operator's workspace id and secret, the pill's status, a trigger's
// public URL shown once and called from outside (its run appears), and a dead
// letter (a call the desktop kept refusing, past a 1 s retention) replayed.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agent, apiClient, launchBrowser, openApp, openTab, relayBinary, shoot, startRelay, startServer, until } from './harness.mjs';

let dir;
let relay;
let server;
let browser;
let context;
let call;
let wsId;

/** The relay expires undelivered calls after 1 s, so a dead letter is cheap to make. */
const runRelay = (listen = '127.0.0.1:0') => startRelay(join(dir, 'relay.db'), { listen, args: ['-retention', '1s'] });

before(async () => {
  process.env.RERUN_KEYCHAIN = 'off';
  dir = mkdtempSync(join(tmpdir(), 'rerun-e2e-relay-'));
  relay = await runRelay();
  server = await startServer();
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.origin });
  call = apiClient(server);
  wsId = (await call('GET', '/api/workspaces')).current;
});
after(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
  await relay?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('relay', () => {
  let page;
  let ada;
  let publicUrl;
  let triggerId;

  test('link with the operator’s workspace id and secret; the pill says connected', async () => {
    const printed = execFileSync(relayBinary(), ['-db', join(dir, 'relay.db'), '-new-workspace']).toString();
    const [, relayWs, secret] = /workspace (\S+)\nsecret (\S+)/.exec(printed);
    page = await openApp(context, server);
    assert.equal(await page.getByTestId('sync-status').count(), 0, 'no sync status before linking');
    await page.getByTestId('open-settings').click();
    await page.getByRole('menuitem', { name: /Relay/ }).click();
    const dlg = page.getByTestId('relay-dialog');
    await dlg.getByLabel('Relay address').fill('http://relay.example.com');
    await dlg.getByLabel('Signup token', { exact: true }).fill('x');
    await dlg.getByTestId('relay-link').click();
    assert.match(await dlg.getByTestId('relay-link-error').textContent(), /https:\/\//, 'plain http elsewhere is refused');

    await dlg.getByLabel('Relay address').fill(relay.url);
    await dlg.getByLabel('With a workspace id and secret').check();
    await dlg.getByLabel('Workspace id', { exact: true }).fill(relayWs);
    await dlg.getByLabel('Secret', { exact: true }).fill(secret + 'x');
    await dlg.getByTestId('relay-link').click();
    assert.match(await dlg.getByTestId('relay-link-error').textContent(), /secret/, 'a wrong secret says so');
    await dlg.getByLabel('Secret', { exact: true }).fill(secret);
    await dlg.getByTestId('relay-link').click();
    await dlg.getByTestId('relay-connected').filter({ hasText: /^Connected$/ }).waitFor();
    assert.equal(await dlg.getByTestId('relay-hook-base').textContent(), `${relay.url}/h/rrh_…`);
    await dlg.getByTestId('relay-no-dead-letters').waitFor();
    await shoot(page, 'relay-dialog');

    await dlg.getByTestId('relay-device').first().waitFor();
    assert.equal(await dlg.getByTestId('relay-device').count(), 1, 'one device before pairing');
    assert.match(await dlg.getByTestId('relay-automations-badge').textContent(), /webhooks/, 'the first device takes the webhooks');
    await dlg.getByTestId('relay-add-device').click();
    const code = dlg.getByTestId('relay-pairing');
    await code.waitFor();
    assert.match(await code.getByLabel('The pairing code').inputValue(), /^rerun-pair-1\./);
    await code.getByRole('button', { name: 'Done' }).click();
    await dlg.getByLabel('Close').click();
    await page.getByTestId('sync-status').filter({ hasText: /^Synced/ }).waitFor(); // linking starts device sync
  });

  test('a trigger’s public URL, shown once, reaches the agent through the relay', async () => {
    const board = await call('GET', `/api/workspaces/${wsId}/board`);
    ada = await call('POST', `/api/workspaces/${wsId}/agents`, { name: 'Ada Lovelace', box_id: board.boxes[0].id });
    await page.reload();
    await agent(page, ada.handle).click();
    await openTab(page, 'Automations');
    const tab = page.getByTestId('automations-tab');
    await tab.getByTestId('new-trigger').click();
    const tdlg = page.getByTestId('trigger-dialog');
    await tdlg.getByLabel('Name', { exact: true }).fill('New order');
    await tdlg.getByLabel('Instruction', { exact: true }).fill('Thank the customer.');
    await tdlg.getByTestId('trigger-save').click();
    const card = tab.getByTestId('trigger').first();
    publicUrl = (await card.getByTestId('trigger-public-url').textContent()).trim();
    assert.ok(publicUrl.startsWith(`${relay.url}/h/rrh_`), publicUrl);
    const local = await card.getByTestId('trigger-url').inputValue();
    assert.equal(publicUrl.split('/h/')[1], local.split('/hooks/')[1], 'the same token behind both URLs');
    assert.ok(publicUrl.startsWith((await card.getByTestId('trigger-public-url-prefix').textContent()).replace(/…$/, '')));
    const [t] = await call('GET', `/api/workspaces/${wsId}/agents/${ada.id}/triggers`);
    triggerId = t.id;

    // The relay takes the call once the app has told it the token's hash.
    await until('the public URL to answer 202', async () => (await fetch(publicUrl, { method: 'POST', body: '{"order":42}' })).status === 202);
    const [d] = await until('the delivery', async () => {
      const list = await call('GET', `/api/workspaces/${wsId}/triggers/${triggerId}/deliveries`);
      return list.length > 0 && list[0].run_id ? list : null;
    });
    const run = await call('GET', `/api/workspaces/${wsId}/runs/${d.run_id}`);
    assert.match(run.input, /"order":42/);
    await card.getByTestId('trigger-deliveries-toggle').click();
    await card.getByTestId('delivery').first().waitFor();
    await card.getByTestId('delivery-run').first().waitFor();
  });

  test('a call the app kept refusing becomes a dead letter; Replay delivers it', async () => {
    await call('PATCH', `/api/workspaces/${wsId}/triggers/${triggerId}`, { enabled: false }); // 503: the relay retries
    assert.equal((await fetch(publicUrl, { method: 'POST', body: '{"order":43}' })).status, 202);
    await new Promise((r) => setTimeout(r, 1500)); // past the 1 s retention
    const listen = relay.url.replace('http://', '');
    await relay?.stop();
    relay = await runRelay(listen); // expires deliveries as it starts
    await call('PATCH', `/api/workspaces/${wsId}/triggers/${triggerId}`, { enabled: true });

    await page.getByTestId('open-settings').click();
    await page.getByRole('menuitem', { name: /Relay/ }).click();
    const dlg = page.getByTestId('relay-dialog');
    await dlg.getByTestId('relay-connected').filter({ hasText: /^Connected$/ }).waitFor();
    const letter = dlg.getByTestId('relay-dead-letter');
    await until('the dead letter', async () => {
      if ((await letter.count()) > 0) return true;
      await dlg.getByLabel('Close').click();
      await page.getByTestId('open-settings').click();
      await page.getByRole('menuitem', { name: /Relay/ }).click();
      return false;
    });
    await shoot(page, 'relay-dialog-dead-letter');
    const before = (await call('GET', `/api/workspaces/${wsId}/triggers/${triggerId}/deliveries`)).filter((x) => x.run_id).length;
    await letter.getByTestId('relay-replay').click();
    await until('the replayed delivery', async () => {
      const list = await call('GET', `/api/workspaces/${wsId}/triggers/${triggerId}/deliveries`);
      return list.filter((x) => x.run_id).length === before + 1;
    });
    await dlg.getByTestId('relay-no-dead-letters').waitFor();

    await dlg.getByTestId('relay-unlink').click();
    await page.getByTestId('relay-unlink-confirm').getByRole('button', { name: 'Unlink' }).click();
    await dlg.getByTestId('relay-link-form').waitFor();
    assert.equal((await fetch(publicUrl, { method: 'POST', body: '{}' })).status, 404, 'the relay forgot the workspace');
  });
});
