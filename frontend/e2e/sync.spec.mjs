// Device sync in the UI: a real rerun-relay and two `rerun serve` processes on
// two data dirs. Device A links in Settings → Relay and makes a pairing code
// (Add a device); device B pastes it in "Join a workspace from another
// device…", switches to the workspace, and A's agents appear; a rename on A
// reaches B's board live; B's pill says it is synced, and Settings → Relay on
// B lists both devices with A taking the webhooks.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agent, apiClient, launchBrowser, openApp, relayBinary, shoot, startRelay, startServer, until } from './harness.mjs';

let dir;
let relay;
let serverA;
let serverB;
let browser;
let ctxA;
let ctxB;
let callA;
let callB;

before(async () => {
  process.env.RERUN_KEYCHAIN = 'off';
  dir = mkdtempSync(join(tmpdir(), 'rerun-e2e-sync-'));
  relay = await startRelay(join(dir, 'relay.db'));
  serverA = await startServer();
  serverB = await startServer();
  browser = await launchBrowser();
  // One context per device: both servers are 127.0.0.1, and cookies ignore the port.
  ctxA = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  ctxB = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  await ctxA.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: serverA.origin });
  callA = apiClient(serverA);
  callB = apiClient(serverB);
});
after(async () => {
  await ctxA?.close();
  await ctxB?.close();
  await browser?.close();
  await serverA?.stop();
  await serverB?.stop();
  await relay?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('device sync', () => {
  let wsId;
  let ada;
  let code;
  let pageB;

  test('A links and makes a pairing code', async () => {
    wsId = (await callA('GET', '/api/workspaces')).current;
    const board = await callA('GET', `/api/workspaces/${wsId}/board`);
    const box = board.boxes.find((b) => b.name !== 'System') ?? board.boxes[0];
    ada = await callA('POST', `/api/workspaces/${wsId}/agents`, { name: 'Ada Lovelace', box_id: box.id, soul: 'You count.' });
    await callA('POST', `/api/workspaces/${wsId}/agents`, { name: 'Grace Hopper', box_id: box.id });

    const printed = execFileSync(relayBinary(), ['-db', join(dir, 'relay.db'), '-new-workspace']).toString();
    const [, relayWs, secret] = /workspace (\S+)\nsecret (\S+)/.exec(printed);
    const page = await openApp(ctxA, serverA);
    await page.getByTestId('open-settings').click();
    await page.getByRole('menuitem', { name: /Relay/ }).click();
    const dlg = page.getByTestId('relay-dialog');
    await dlg.getByLabel('Relay address').fill(relay.url);
    await dlg.getByLabel('With a workspace id and secret').check();
    await dlg.getByLabel('Workspace id', { exact: true }).fill(relayWs);
    await dlg.getByLabel('Secret', { exact: true }).fill(secret);
    await dlg.getByTestId('relay-link').click();
    await dlg.getByTestId('relay-connected').filter({ hasText: /^Connected$/ }).waitFor();
    await dlg.getByTestId('relay-add-device').click();
    const shown = dlg.getByTestId('relay-pairing');
    await shown.waitFor();
    assert.match(await shown.textContent(), /Anyone with this code/, 'the code comes with a warning');
    code = await shown.getByLabel('The pairing code').inputValue();
    assert.match(code, /^rerun-pair-1\./);
    await shoot(page, 'sync-pairing-code');
  });

  test('B joins with the code: A’s agents appear, and a rename on A arrives live', async () => {
    pageB = await openApp(ctxB, serverB);
    await pageB.getByTestId('workspace-pill').click();
    await pageB.getByTestId('join-workspace').click();
    const dlg = pageB.getByTestId('join-workspace-dialog');
    await dlg.getByLabel('Pairing code').fill('rerun-pair-1.nonsense');
    await dlg.getByTestId('join-submit').click();
    await dlg.getByRole('alert').filter({ hasText: /pairing code/ }).waitFor();
    await dlg.getByLabel('Pairing code').fill(code);
    await shoot(pageB, 'sync-join-dialog');
    await dlg.getByTestId('join-submit').click();
    await dlg.waitFor({ state: 'detached' });

    await until('the workspace switched on B', async () => (await callB('GET', '/api/workspaces')).current === wsId);
    await agent(pageB, ada.handle).waitFor();
    const pill = pageB.getByTestId('sync-status');
    await pill.filter({ hasText: /Synced|Connected/ }).waitFor();

    await callA('PATCH', `/api/workspaces/${wsId}/agents/${ada.id}`, { name: 'Ada Byron' });
    await pageB.locator(`[data-testid="agent"][aria-label^="Ada Byron"]`).waitFor();
    const onB = await callB('GET', `/api/workspaces/${wsId}/agents/${ada.id}`);
    assert.equal(onB.soul, 'You count.', 'the soul came along');
    await pill.filter({ hasText: /Synced/ }).waitFor();
    await shoot(pageB, 'sync-pill');
  });

  test('B lists both devices; A takes the webhooks', async () => {
    await pageB.getByTestId('open-settings').click();
    await pageB.getByRole('menuitem', { name: /Relay/ }).click();
    const dlg = pageB.getByTestId('relay-dialog');
    await until('both devices listed on B', async () => (await dlg.getByTestId('relay-device').count()) === 2);
    const mine = dlg.locator('[data-testid="relay-device"]', { hasText: 'this device' });
    assert.equal(await mine.getByTestId('relay-automations-badge').count(), 0, 'B does not take the webhooks');
    assert.match(await dlg.getByTestId('relay-sync').textContent(), /up to date|changes to send/);
    await shoot(pageB, 'sync-devices');
  });
});
