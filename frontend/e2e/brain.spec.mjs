// The Brain view against a real `rerun serve`: opened from the board's top
// bar, a page is created, edited with the markdown preview, still edited
// after a reload, its history shows both versions and the diff between them,
// a page written elsewhere (the API, as an approved proposal would) shows up
// live, and a page is deleted after a confirm.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { apiClient, launchBrowser, openApp, shoot, startServer } from './harness.mjs';

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

const row = (page, title) => page.locator(`[data-testid="brain-row"][data-title="${title}"]`);

async function openBrain(page) {
  await page.getByTestId('open-brain').click();
  await page.getByTestId('brain-dialog').waitFor();
}

test('create, edit, reload, history, live update and delete', async () => {
  const page = await openApp(context, server);
  await openBrain(page);
  await page.getByTestId('brain-empty').waitFor();

  // Create.
  await page.getByTestId('brain-new').click();
  await page.getByTestId('brain-title').fill('What we sell');
  await page.getByTestId('brain-body').fill('# Offer\n\nHand-made city bikes, from 1 200 EUR.');
  await page.getByRole('button', { name: 'Preview' }).click();
  assert.match(await page.getByTestId('brain-preview').innerText(), /Hand-made city bikes/);
  await page.getByTestId('brain-save').click();
  await page.getByTestId('brain-page').waitFor();
  assert.equal(await page.getByTestId('brain-page-title').innerText(), 'What we sell');
  assert.match(await row(page, 'What we sell').innerText(), /Hand-made city bikes, from 1 200 EUR\./); // the derived summary

  // Edit.
  await page.getByTestId('brain-edit').click();
  await page.getByTestId('brain-body').fill('# Offer\n\nHand-made city bikes, from 1 200 EUR.\n\nWe also rent bikes by the day.');
  await page.getByTestId('brain-summary').fill('City bikes, sold and rented.');
  await page.getByTestId('brain-save').click();
  await page.getByTestId('brain-page').waitFor();
  assert.match(await page.getByTestId('brain-page-body').innerText(), /rent bikes by the day/);

  // Reload: the edit persisted.
  await page.reload();
  await page.getByTestId('open-brain').waitFor();
  await openBrain(page);
  await page.getByTestId('brain-page').waitFor();
  assert.match(await page.getByTestId('brain-page-body').innerText(), /rent bikes by the day/);
  assert.match(await row(page, 'What we sell').innerText(), /City bikes, sold and rented\./);

  // History: 2 versions, the newest opens as a diff.
  await page.getByTestId('brain-history').click();
  assert.equal(await page.getByTestId('brain-version-count').innerText(), '2');
  assert.equal(await page.getByTestId('brain-version').count(), 2);
  await page.locator('[data-testid="brain-version"][data-version="2"]').click();
  const diff = page.getByTestId('brain-version-diff');
  await diff.waitFor();
  assert.equal(await diff.locator('[data-kind="add"]').filter({ hasText: 'rent bikes by the day' }).count(), 1);
  // Read as prose: no unified-diff headers or +/- marks.
  const diffText = await diff.getByTestId('diff').innerText();
  assert.doesNotMatch(diffText, /^(---|\+\+\+|@@)/m);
  assert.match(await diff.getByTestId('diff-stats').innerText(), /added/);
  await shoot(page, 'brain');

  // A page written elsewhere shows up without a reload.
  await call('POST', `/api/workspaces/${wsId}/brain`, { title: 'Tone', body: 'Warm, short, no jargon.' });
  await row(page, 'Tone').waitFor();

  // A stale edit is refused with what to do, and the draft stays.
  await row(page, 'Tone').click();
  await page.getByTestId('brain-edit').click();
  const tone = await call('GET', `/api/workspaces/${wsId}/brain/tone`);
  await call('PATCH', `/api/workspaces/${wsId}/brain/${tone.id}`, { base_version: 1, body: 'Warm and short.' });
  await page.getByTestId('brain-stale').waitFor();
  await page.getByTestId('brain-body').fill('Formal.');
  await page.getByTestId('brain-save').click();
  assert.match(await page.getByTestId('brain-save-error').innerText(), /changed while you edited it.*reload the page/s);
  assert.equal(await page.getByTestId('brain-body').inputValue(), 'Formal.');
  await page.getByRole('button', { name: 'Cancel' }).click();

  // Delete, after a confirm.
  await row(page, 'What we sell').click();
  await page.getByTestId('brain-delete').click();
  const confirm = page.getByTestId('delete-brain-dialog');
  await confirm.getByRole('button', { name: 'Delete page' }).click();
  await page.getByTestId('brain-notice').waitFor();
  // The notice and the list's refresh are separate renders: wait for the row to go.
  await row(page, 'What we sell').waitFor({ state: 'detached' });
  const left = await call('GET', `/api/workspaces/${wsId}/brain`);
  assert.deepEqual(
    left.map((p) => p.title),
    ['Tone'],
  );
  assert.deepEqual(page.errors, []);
});
