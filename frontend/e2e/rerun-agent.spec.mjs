// The built-in Rerun agent on the board: its own corner spot, its panel, and
// "Ask Rerun…" from any coworker's menu.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { addAgent, agent, apiClient, closePanel, launchBrowser, openApp, openTab, shoot, startServer } from './harness.mjs';

let server;
let browser;
let context;

before(async () => {
  server = await startServer();
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
});
after(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
});

describe('the Rerun agent', () => {
  let page;
  let ada;

  test('has its own spot on the board, outside every box', async () => {
    page = await openApp(context, server);
    const spot = page.getByTestId('rerun-spot');
    await spot.waitFor();
    assert.match(await spot.textContent(), /@rerun/);
    const figure = spot.getByTestId('rerun-agent');
    assert.equal(await figure.getAttribute('data-box-id'), 'bx_system');
    // Not drawn on a box, and the box list has no system box.
    assert.equal(await page.locator('[data-testid="box"] [data-agent-handle="rerun"]').count(), 0);
    assert.equal(await page.locator('[data-testid="box"]').count(), 1);
    // With no coworker of the person's yet, the board still invites the first one.
    await page.getByRole('button', { name: '+ Add your first coworker' }).waitFor();
    await shoot(page, 'rerun-empty');
  });

  test('clicking it opens its panel; it cannot be deleted, renamed or moved', async () => {
    await page.getByTestId('rerun-spot').getByTestId('rerun-agent').click();
    const panel = page.getByTestId('agent-panel');
    await panel.waitFor();
    assert.equal(await panel.getByTestId('panel-agent-name').textContent(), 'Rerun');
    await openTab(page, 'Settings');
    await panel.getByTestId('builtin-note').waitFor();
    assert.equal(await panel.getByRole('button', { name: 'Delete coworker…' }).count(), 0);
    assert.equal(await panel.locator('#set-box').count(), 0);
    assert.equal(await panel.locator('#set-name').getAttribute('readonly'), '');
    await openTab(page, 'Chat');
    await closePanel(page);

    // The server refuses too, whatever the UI shows.
    const call = apiClient(server);
    const { current } = await call('GET', '/api/workspaces');
    await assert.rejects(call('DELETE', `/api/workspaces/${current}/agents/ag_rerun`), /400.*cannot be deleted/);
  });

  test('its own menu offers no Move, Delete or Ask Rerun', async () => {
    await page.getByTestId('rerun-spot').getByTestId('rerun-agent').click({ button: 'right' });
    const menu = page.getByRole('menu').first();
    await menu.waitFor();
    const items = await menu.getByRole('menuitem').allTextContents();
    assert.deepEqual(items.map((s) => s.trim()), ['Open']);
    await page.keyboard.press('Escape');
    await menu.waitFor({ state: 'detached' });
  });

  test('right-click a coworker → Ask Rerun… opens its chat prefilled, focused', async () => {
    ada = await addAgent(page, 'Ada Lovelace', 'Main');
    await closePanel(page);
    await agent(page, ada).click({ button: 'right' });
    const menu = page.getByRole('menu').first();
    await menu.getByRole('menuitem', { name: 'Ask Rerun…' }).click();
    const panel = page.getByTestId('agent-panel');
    await panel.waitFor();
    assert.equal(await panel.getByTestId('panel-agent-name').textContent(), 'Rerun');
    const input = panel.getByTestId('chat-input');
    await page.waitForFunction((want) => document.querySelector('[data-testid="chat-input"]')?.value === want, `About @${ada}: `);
    assert.equal(await input.evaluate((el) => document.activeElement === el), true, 'the message box has the focus');
    // Typing goes on after the prefill.
    await page.keyboard.type('give it a skill for weekly reports');
    assert.equal(await input.inputValue(), `About @${ada}: give it a skill for weekly reports`);
    await shoot(page, 'rerun-ask');
    await input.fill('');
    await closePanel(page);
    await shoot(page, 'rerun-board');
    assert.deepEqual(page.errors, []);
  });
});
