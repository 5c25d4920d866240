// Settings → About Rerun: the build's version, commit and date and the data
// folder, as the server reports them; "Check for updates" says why it could
// not check (the tests turn checks off: RERUN_UPDATE_FEED=off).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { launchBrowser, openApp, shotPath, startServer } from './harness.mjs';

let server;
let browser;

before(async () => {
  process.env.RERUN_UPDATE_FEED = 'off';
  server = await startServer();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

test('About Rerun shows the build and the data folder, and checking for updates says it is off', async () => {
  const context = await browser.newContext();
  const page = await openApp(context, server);
  await page.getByTestId('open-settings').click();
  await page.getByRole('menuitem', { name: /^About Rerun/ }).click();
  const dialog = page.getByTestId('about-dialog');
  await dialog.getByTestId('about-data-dir').filter({ hasText: server.dataDir }).waitFor();

  const info = await page.evaluate(async () => (await fetch('/api/info')).json());
  assert.equal(await dialog.getByTestId('about-version').textContent(), info.version);
  assert.equal(await dialog.getByTestId('about-commit').textContent(), info.commit);
  assert.equal(info.data_dir, server.dataDir);
  assert.match(await dialog.getByRole('link', { name: /License/ }).getAttribute('href'), /^https:\/\//);

  await dialog.getByTestId('about-check').click();
  await dialog.getByRole('alert').filter({ hasText: 'Update checks are off' }).waitFor();
  await page.screenshot({ path: shotPath('about.png') });
  await dialog.getByText('Close', { exact: true }).click();
  await dialog.waitFor({ state: 'detached' });
  assert.deepEqual(page.errors, []);
  await context.close();
});
