// Your data: Settings → Backups makes an encrypted backup into a folder;
// the pill menu restores it as a new workspace (a wrong passphrase is
// refused and changes nothing) and deletes a workspace once its name is
// typed.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addAgent, agent, apiClient, closePanel, launchBrowser, openApp, openTab, shoot, startServer } from './harness.mjs';

let server;
let browser;

before(async () => {
  server = await startServer();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

test('back up, restore into a new workspace, delete it', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'rerun-backups-'));
  const context = await browser.newContext();
  const page = await openApp(context, server);

  await page.getByTestId('open-settings').click();
  await page.getByRole('menuitem', { name: /^Backups/ }).click();
  const dialog = page.getByTestId('backups-dialog');
  await dialog.getByTestId('backup-last').filter({ hasText: 'No backup yet' }).waitFor();
  await dialog.getByLabel('Folder', { exact: true }).fill(folder);
  await dialog.getByLabel('Passphrase', { exact: true }).fill('blue heron river');
  await dialog.getByLabel('Again', { exact: true }).fill('blue heron river');
  await dialog.getByTestId('backup-daily').check();
  await dialog.getByRole('status').filter({ hasText: 'Backs up daily' }).waitFor();
  const call0 = apiClient(server);
  const { current: wsNow } = await call0('GET', '/api/workspaces');
  const sched = await call0('GET', `/api/workspaces/${wsNow}/backups/schedule`);
  assert.deepEqual(sched, { enabled: true, folder, keep: 7, has_passphrase: true });
  await dialog.getByTestId('backup-now').click();
  await dialog.getByTestId('backup-last').filter({ hasText: 'files' }).waitFor();
  await shoot(page, 'backups-dialog');
  const files = readdirSync(folder);
  assert.equal(files.length, 1);
  assert.match(files[0], /^rerun-personal-.*\.rerun-backup$/);
  await dialog.getByText('Close', { exact: true }).click();

  // Restore: a wrong passphrase first.
  await page.getByTestId('workspace-pill').click();
  await page.getByTestId('restore-workspace').click();
  const restore = page.getByTestId('restore-dialog');
  await restore.getByLabel('Backup file').fill(join(folder, files[0]));
  await restore.getByLabel('Passphrase').fill('not the one');
  await restore.getByLabel('Name of the new workspace').fill('Restored copy');
  await restore.getByTestId('restore-submit').click();
  await restore.getByTestId('restore-error').filter({ hasText: 'passphrase does not open' }).waitFor();
  await shoot(page, 'restore-wrong-passphrase');
  const call = apiClient(server);
  assert.equal((await call('GET', '/api/workspaces')).workspaces.length, 1);
  await restore.getByLabel('Passphrase').fill('blue heron river');
  await restore.getByTestId('restore-submit').click();
  await restore.waitFor({ state: 'detached' });
  await page.getByTestId('workspace-name').filter({ hasText: 'Restored copy' }).waitFor();

  // Delete it: the button waits for the name.
  await page.getByTestId('workspace-pill').click();
  await page.getByTestId('delete-workspace').click();
  const del = page.getByTestId('delete-workspace-dialog');
  assert.equal(await del.getByTestId('delete-workspace-submit').isDisabled(), true);
  await del.getByLabel(/to confirm/).fill('Restored cop');
  assert.equal(await del.getByTestId('delete-workspace-submit').isDisabled(), true);
  await del.getByLabel(/to confirm/).fill('Restored copy');
  await shoot(page, 'delete-workspace-dialog');
  await del.getByTestId('delete-workspace-submit').click();
  await del.waitFor({ state: 'detached' });
  await page.getByTestId('workspace-name').filter({ hasText: 'Personal' }).waitFor();
  assert.equal((await call('GET', '/api/workspaces')).workspaces.length, 1);
  // The last workspace offers no delete.
  await page.getByTestId('workspace-pill').click();
  assert.equal(await page.getByTestId('delete-workspace').count(), 0);
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('export a coworker with memory from its Settings, import it from the pill menu', async () => {
  const context = await browser.newContext({ acceptDownloads: true });
  const page = await openApp(context, server);
  const handle = await addAgent(page, 'Mira');
  const call = apiClient(server);
  const { current } = await call('GET', '/api/workspaces');
  const board = await call('GET', `/api/workspaces/${current}/board`);
  const mira = board.agents.find((a) => a.handle === handle);
  await call('POST', `/api/workspaces/${current}/agents/${mira.id}/memories`, { text: 'Mira ships on Fridays' });

  await agent(page, handle).click();
  await openTab(page, 'Settings');
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('agent-export-link').click()]);
  assert.equal(download.suggestedFilename(), `${handle}.rerun-agent`);
  const file = await download.path();
  const exported = JSON.parse(readFileSync(file, 'utf8'));
  assert.equal(exported.format, 'rerun-agent');
  assert.equal(exported.memories[0].text, 'Mira ships on Fridays');
  await closePanel(page);

  await page.getByTestId('workspace-pill').click();
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.getByTestId('import-agent').click()]);
  await chooser.setFiles(file);
  await page.getByText(/Imported Mira as @/).waitFor();
  const after = await call('GET', `/api/workspaces/${current}/board`);
  const copy = after.agents.find((a) => a.name === 'Mira' && a.handle !== handle);
  assert.ok(copy, 'the imported coworker is on the board with a new handle');
  const mems = await call('GET', `/api/workspaces/${current}/agents/${copy.id}/memories`);
  assert.ok(JSON.stringify(mems).includes('Mira ships on Fridays'));
  assert.deepEqual(page.errors, []);
  await context.close();
});
