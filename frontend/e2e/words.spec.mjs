// Words and looks a person meets (issue 24): contrast checked by axe-core on the
// board, the panel's tabs and the main dialogs in light and dark; errors in
// plain words with the raw text behind Details; skill names typed as words;
// soul history by author with its diff; the theme switch; the favicon; bare
// URLs in chat that stop where JSON starts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { addAgent, agent, apiClient, axeClean, launchBrowser, openApp, openTab, shoot, startFakeLLM, startServer } from './harness.mjs';

let llm;
let server;
let browser;
let context;
let call;

before(async () => {
  llm = await startFakeLLM();
  server = await startServer({ llm });
  browser = await launchBrowser();
  // bypassCSP: axe is injected as an inline script.
  context = await browser.newContext({ viewport: { width: 1280, height: 860 }, bypassCSP: true });
  call = apiClient(server);
});
after(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
  await llm?.stop();
});

/** Resizes the page and waits until its resize event went by (an open menu closes on it). */
async function resize(page, width, height) {
  await page.setViewportSize({ width, height });
  await page.waitForFunction((w) => window.innerWidth === w, width);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}

async function say(page, text) {
  const input = page.getByTestId('chat-input');
  await input.fill(text);
  await input.press('Enter');
}

describe('words and looks', () => {
  let page;
  let ada;
  let wsId;
  let adaId;

  test('the board, the panel tabs and the main dialogs have no serious axe violations, light and dark', async () => {
    page = await openApp(context, server);
    ada = await addAgent(page, 'Ada Lovelace', 'Main');
    wsId = (await call('GET', '/api/workspaces')).current;
    adaId = (await call('GET', `/api/workspaces/${wsId}/board`)).agents.find((a) => a.handle === ada).id;
    // The panel opens on the new coworker (Escape would close it now).
    if (!(await page.getByTestId('agent-panel').isVisible())) await agent(page, ada).click();
    await page.getByTestId('agent-panel').waitFor();
    await axeClean(page, 'the board with its panel');
    for (const tab of ['Chat', 'To handle', 'Desktop', 'Monitoring', 'Logs', 'Memory', 'Skills', 'Apps', 'Automations', 'Settings']) {
      await openTab(page, tab);
      await axeClean(page, `the ${tab} tab`, '[data-testid="agent-panel"]');
    }
    // The gear stays on the board's side of the open panel, clickable, down to 1024 px wide.
    await resize(page, 1024, 700);
    await page.getByTestId('open-settings').click();
    await page.getByRole('menuitem', { name: /^General/ }).waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('menu').waitFor({ state: 'detached' });
    assert.ok(await page.getByTestId('agent-panel').isVisible(), 'Escape closed the menu, not the panel');
    await resize(page, 1280, 860);
    await page.getByTestId('open-settings').click();
    await page.getByRole('menuitem', { name: /^General/ }).click();
    await page.getByTestId('general-settings-dialog').waitFor();
    await axeClean(page, 'Settings → General', '[data-testid="general-settings-dialog"]');
    await page.keyboard.press('Escape');
    await page.getByTestId('general-settings-dialog').waitFor({ state: 'detached' });
    // Closing a dialog opened from the gear gives the gear its focus back; its menu stays closed.
    assert.equal(await page.getByRole('menu').count(), 0, 'the Settings menu does not open again');
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-testid')), 'open-settings');
    await page.getByTestId('open-settings').click();
    await page.getByRole('menuitem', { name: /^Models/ }).click();
    await page.getByRole('dialog').waitFor();
    await axeClean(page, 'Settings → Models', '[role="dialog"]');
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    assert.deepEqual(page.errors, []);
  });

  test('the theme switch in Settings → General holds across a reload, and "system" follows the computer', async () => {
    await page.emulateMedia({ colorScheme: 'light' });
    await page.getByTestId('open-settings').click();
    await page.getByRole('menuitem', { name: /^General/ }).click();
    const dlg = page.getByTestId('general-settings-dialog');
    await dlg.getByText('Dark', { exact: true }).click();
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
    await shoot(page, 'general-theme');
    await page.reload();
    await page.locator('[data-testid="box"]').first().waitFor();
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark', 'the choice is kept');
    await page.getByTestId('open-settings').click();
    await page.getByRole('menuitem', { name: /^General/ }).click();
    await dlg.getByText('Same as the computer', { exact: true }).click();
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'light');
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.waitForFunction(() => document.documentElement.dataset.theme === 'dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.keyboard.press('Escape');
  });

  test('the page has a favicon', async () => {
    const href = await page.locator('link[rel="icon"]').getAttribute('href');
    const res = await page.evaluate(async (h) => {
      const r = await fetch(h);
      return { status: r.status, type: r.headers.get('content-type') ?? '', body: await r.text() };
    }, href);
    assert.equal(res.status, 200);
    assert.match(res.type + res.body.slice(0, 5), /svg/);
  });

  test('a skill typed "Weekly Report" saves as weekly-report; the same name again says it is taken', async () => {
    if (!(await page.getByTestId('agent-panel').isVisible())) await agent(page, ada).click();
    await openTab(page, 'Skills');
    await page.getByTestId('skill-new').click();
    await page.getByTestId('skill-name').fill('Weekly Report');
    assert.match(await page.getByTestId('skill-slug').innerText(), /Saved as weekly-report/);
    await page.getByTestId('skill-description').fill('Write the weekly report on Fridays');
    assert.doesNotMatch(await page.getByTestId('skill-status').innerText(), /Pick another name/);
    await page.getByTestId('skill-save').click();
    await page.getByTestId('skill-status').filter({ hasText: 'Saved' }).waitFor();
    const saved = await call('GET', `/api/workspaces/${wsId}/agents/${adaId}/skills/weekly-report`);
    assert.equal(saved.name, 'weekly-report');

    await page.getByTestId('skill-back').click();
    await page.getByTestId('skill-new').click();
    await page.getByTestId('skill-name').fill('weekly report');
    await page.getByTestId('skill-name-taken').filter({ hasText: 'weekly-report' }).waitFor();
    assert.match(await page.getByTestId('skill-status').innerText(), /taken/);
    await shoot(page, 'skill-name-taken');
    assert.deepEqual(page.errors, []);
  });

  test('soul history says who wrote each version, and a version opens as its diff', async () => {
    await openTab(page, 'Settings');
    const panel = page.getByTestId('agent-panel');
    await panel.getByTestId('soul-editor').fill('# Ada\nBe brief.');
    await panel.getByRole('button', { name: 'Save' }).click();
    await panel.getByTestId('save-status').getByText('Saved').waitFor();
    await panel.getByTestId('soul-editor').fill('# Ada\nBe brief and kind.');
    await panel.getByRole('button', { name: 'Save' }).click();
    await panel.getByTestId('save-status').getByText('Saved').waitFor();
    await panel.getByTestId('soul-history-toggle').click();
    const rows = panel.locator('[data-testid="soul-history"] button');
    await rows.nth(2).waitFor();
    const lines = await rows.allInnerTexts();
    assert.match(lines[0], /Edited by you/);
    assert.match(lines[1], /Edited by you/);
    assert.ok(lines.every((l) => !/^v\d+\s*Ada\b/.test(l)), `rows are not titled by the first line: ${lines}`);
    await rows.first().click();
    const dlg = page.getByTestId('soul-version-dialog');
    await dlg.getByTestId('soul-version-meta').filter({ hasText: 'Written by you' }).waitFor();
    const diff = dlg.getByTestId('soul-version-diff');
    assert.equal(await diff.locator('[data-kind="add"]').filter({ hasText: 'Be brief and kind.' }).count(), 1);
    assert.equal(await diff.locator('[data-kind="del"]').filter({ hasText: 'Be brief.' }).count(), 1);
    assert.doesNotMatch(await diff.innerText(), /^(---|\+\+\+|@@)/m);
    await shoot(page, 'soul-version-diff');
    await axeClean(page, 'the soul version dialog', '[data-testid="soul-version-dialog"]');
    await dlg.getByRole('button', { name: 'Close', exact: true }).last().click();
    await dlg.waitFor({ state: 'detached' });
    assert.deepEqual(page.errors, []);
  });

  test('an unreachable MCP server is explained in plain words, the raw error behind Details', async () => {
    await openTab(page, 'Apps');
    await page.getByTestId('add-mcp-server').click();
    const dlg = page.getByTestId('custom-server-dialog');
    await dlg.getByLabel('Name', { exact: true }).fill('Closed port');
    await dlg.getByLabel('URL', { exact: true }).fill('http://127.0.0.1:9/mcp');
    await dlg.getByTestId('custom-test').click();
    const note = dlg.getByTestId('custom-test-error');
    await note.waitFor();
    assert.match(await note.getByTestId('error-summary').innerText(), /did not answer/);
    const detail = note.getByTestId('error-detail');
    assert.equal(await detail.isVisible(), false, 'the technical text waits behind Details');
    await note.getByText('Details', { exact: true }).click();
    assert.match(await detail.innerText(), /connection refused|dial tcp/);
    await shoot(page, 'error-note');
    await axeClean(page, 'the custom server dialog with an error', '[data-testid="custom-server-dialog"]');
    await page.keyboard.press('Escape');
    assert.deepEqual(page.errors, []);
  });

  test('a URL inside JSON in chat links only the URL', async () => {
    await openTab(page, 'Chat');
    await say(page, 'hello {"url":"https://example.com/a?b=1","ok":true}');
    const bubble = page.getByTestId('msg-agent').filter({ hasText: 'You said' });
    await bubble.waitFor();
    const links = await bubble.locator('a').evaluateAll((as) => as.map((a) => [a.getAttribute('href'), a.textContent]));
    assert.deepEqual(links, [['https://example.com/a?b=1', 'https://example.com/a?b=1']]);
    assert.match(await bubble.innerText(), /","ok":true}/);
    await axeClean(page, 'the chat with answers', '[data-testid="agent-panel"]');
    assert.deepEqual(page.errors, []);
  });
});
