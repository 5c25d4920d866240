// The Foreman's onboarding against a real `rerun serve` with onboarding on
// (RERUN_ONBOARDING, which the other specs leave off): first start opens the
// Foreman's chat with its first card, even with no model; skip sticks after a
// reload; with the fake model, answering the card writes the first Brain page,
// which the Brain view shows.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { apiClient, launchBrowser, openApp, shoot, startFakeLLM, startServer, until } from './harness.mjs';

process.env.RERUN_KEYCHAIN = 'off';
let browser;
const stops = [];
after(async () => {
  await browser?.close();
  for (const stop of stops.reverse()) await stop();
});

async function start(opts) {
  const server = await startServer({ onboarding: true, ...opts });
  stops.push(() => server.stop());
  browser ??= await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  stops.push(() => context.close());
  const call = apiClient(server);
  const wsId = (await call('GET', '/api/workspaces')).current;
  return { server, context, call, wsId };
}

const firstCard = (page) => page.getByTestId('agent-panel').locator('[data-testid="pause-card"][data-kind="question"]');

test('first start shows the Foreman’s card; skip sticks after a reload', async () => {
  const { server, context, call, wsId } = await start();
  const page = await openApp(context, server);
  const card = firstCard(page);
  await card.waitFor();
  assert.equal(await card.getByTestId('question').count(), 6, 'company, offer, customers, tone, tools, website');
  assert.match(await card.innerText(), /What is your company called\?/);
  assert.match(await page.getByTestId('agent-panel').innerText(), /Foreman/);
  await page.getByTestId('foreman-spot').waitFor();
  assert.equal(await page.getByRole('button', { name: '+ Add your first coworker' }).count(), 0, 'one way in: the Foreman, no second invitation');
  await shoot(page, 'onboarding-first-card');

  await page.getByTestId('onboarding-skip').click();
  await page.locator('[data-testid="foreman-spot"][data-state="skipped"]').waitFor();
  await card.waitFor({ state: 'detached' });
  assert.equal((await call('GET', `/api/workspaces/${wsId}/onboarding`)).state, 'skipped');

  await page.reload();
  await page.locator('[data-testid="foreman-spot"][data-state="skipped"]').waitFor();
  assert.equal(await page.getByTestId('agent-panel').count(), 0, 'a skipped onboarding opens no chat');
  await page.getByRole('button', { name: '+ Add your first coworker' }).waitFor(); // skipped: the board's own way in
  assert.equal(page.errors.length, 0, page.errors.join('\n'));
});

test('answering the card with a model writes a Brain page', async () => {
  const llm = await startFakeLLM();
  stops.push(() => llm.stop());
  const { server, context, call, wsId } = await start({ llm });
  const page = await openApp(context, server);
  const card = firstCard(page);
  await card.waitFor();
  const answers = ['Skyline Kites', 'Handmade stunt kites', 'Kite schools', 'Friendly and plain', 'Gmail', 'We have no website'];
  const questions = card.getByTestId('question');
  for (let i = 0; i < answers.length; i++) await questions.nth(i).getByTestId('other').fill(answers[i]);
  await card.getByTestId('pause-submit').click();
  await card.waitFor({ state: 'detached' });

  // The fake model reads the answers back and ends: onboarding is done.
  await until('onboarding to finish', async () => (await call('GET', `/api/workspaces/${wsId}/onboarding`)).state === 'done');
  await page.getByTestId('foreman-spot').waitFor({ state: 'detached' });

  await page.getByTestId('open-brain').click();
  await page.getByTestId('brain-dialog').waitFor();
  const row = page.locator('[data-testid="brain-row"][data-title="Company profile"]');
  await row.waitFor();
  assert.match(await row.innerText(), /Skyline Kites sells handmade stunt kites to kite schools\./);
  await row.click();
  assert.match(await page.getByTestId('brain-page-body').innerText(), /Friendly and plain/);
  assert.equal(page.errors.length, 0, page.errors.join('\n'));
});
