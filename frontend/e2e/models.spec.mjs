// Settings → Models against a server started without any model key: a chat
// fails with a pointer to Settings → Models; saving a key there fixes it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { addAgent, agent, launchBrowser, openApp, shoot, shotPath, startFakeLLM, startServer } from './harness.mjs';

let llm;
let server;
let browser;

before(async () => {
  llm = await startFakeLLM();
  server = await startServer(); // no model provider
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.stop();
  await llm?.stop();
});

test('without a key a chat explains where to add one; saving it there fixes the chat', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await openApp(context, server);
  const ada = await addAgent(page, 'Ada Lovelace', 'Main');
  await page.getByTestId('no-provider-hint').waitFor();
  // The link and its full stop stay on one line.
  const rects = await page.getByTestId('no-provider-hint').locator('.nowrap').evaluate((el) => el.getClientRects().length);
  assert.equal(rects, 1, 'the link to Settings → Models breaks from its full stop');
  await shoot(page, 'chat-no-model');

  const input = page.getByTestId('chat-input');
  await input.fill('hello');
  await input.press('Enter');
  const error = page.getByTestId('chat-error');
  await error.waitFor();
  assert.match(await error.textContent(), /Settings → Models/);
  // The board marks the agent whose last run failed.
  const mark = agent(page, ada).getByTestId('agent-failed');
  await mark.waitFor();
  assert.equal(await mark.locator('title').textContent(), 'Last run failed');
  await page.screenshot({ path: shotPath('failed-mark.png') });

  await error.getByRole('button', { name: 'Settings → Models' }).click();
  const dlg = page.getByTestId('models-dialog');
  await dlg.waitFor();
  const openai = dlg.getByTestId('provider-openai');
  await openai.getByTestId('provider-state').getByText('Not set up').waitFor();
  assert.equal(await dlg.getByRole('button', { name: 'Forget key' }).count(), 0);
  const key = openai.getByLabel('API key');
  assert.equal(await key.getAttribute('type'), 'password');
  assert.equal(await key.inputValue(), '');
  await key.fill('test');
  await openai.getByLabel('Base URL').fill(llm.openaiBaseURL);
  await openai.getByRole('button', { name: 'Save' }).click();
  await openai.getByTestId('provider-state').getByText('saved in Rerun').waitFor();
  assert.equal(await key.inputValue(), '', 'a saved key is never shown again');
  await openai.getByRole('button', { name: 'Forget key' }).waitFor();
  await page.waitForTimeout(150);
  await page.screenshot({ path: shotPath('models.png') });
  await dlg.getByRole('button', { name: 'Close' }).click();
  await dlg.waitFor({ state: 'detached' });
  await page.getByTestId('no-provider-hint').waitFor({ state: 'detached' });

  await input.fill('hello');
  await input.press('Enter');
  await page.getByTestId('msg-agent').filter({ hasText: 'You said: hello' }).waitFor();
  await mark.waitFor({ state: 'detached' });
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('the toolbar gear opens Settings → Models; Forget removes a saved key', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'dark' });
  const page = await openApp(context, server);
  await page.getByTestId('open-settings').click();
  await page.getByRole('menuitem', { name: /^Models/ }).click();
  const dlg = page.getByTestId('models-dialog');
  const openai = dlg.getByTestId('provider-openai');
  await openai.getByTestId('provider-state').getByText('saved in Rerun').waitFor();
  await page.waitForTimeout(150);
  await page.screenshot({ path: shotPath('models-dark.png') });
  await openai.getByRole('button', { name: 'Forget key' }).click();
  await openai.getByTestId('provider-state').getByText('Not set up').waitFor();
  await page.keyboard.press('Escape');
  await dlg.waitFor({ state: 'detached' });
  assert.deepEqual(page.errors, []);
  await context.close();
});
