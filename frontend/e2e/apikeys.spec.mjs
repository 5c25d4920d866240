// Settings → API keys: a key made in the app works on the MCP endpoint, is shown
// once, and stops working the moment it is revoked.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { launchBrowser, openApp, shotPath, startServer, until } from './harness.mjs';

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

/** A raw JSON-RPC tools/call on the MCP endpoint, as curl would send it. */
async function callTool(key, name, args = {}) {
  const res = await fetch(`${server.origin}/api/mcp/account`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${key}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const text = await res.text();
  let body;
  if (res.ok) {
    // Either plain JSON or one server-sent event carrying it.
    const data = text.trimStart().startsWith('{') ? text : text.split('\n').find((l) => l.startsWith('data:'))?.slice(5);
    body = JSON.parse(data ?? 'null');
  }
  return { status: res.status, body, text };
}

async function openKeys(page, { keyboard = false } = {}) {
  if (keyboard) {
    await page.getByTestId('open-settings').focus();
    await page.keyboard.press('Enter');
    await page.getByRole('menuitem', { name: /^Models/ }).waitFor();
    await page.waitForTimeout(150);
    await page.screenshot({ path: shotPath('settings-menu.png') });
    // Down the menu to API keys, whatever stands above it.
    const keys = page.getByRole('menuitem', { name: /^API keys/ });
    for (let i = 0; i < 10 && !(await keys.evaluate((el) => el === document.activeElement)); i++) {
      await page.keyboard.press('ArrowDown');
    }
    await page.keyboard.press('Enter');
  } else {
    await page.getByTestId('open-settings').click();
    await page.getByRole('menuitem', { name: /^API keys/ }).click();
  }
  const dlg = page.getByTestId('apikeys-dialog');
  await dlg.waitFor();
  return dlg;
}

test('a key created in Settings → API keys works once copied, is never shown again, and revoking it shuts the app out', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await openApp(context, server);

  let dlg = await openKeys(page);
  await dlg.getByTestId('no-keys').waitFor();
  // The snippets point at this server and read the key from RERUN_KEY; the export line has a placeholder.
  const claude = dlg.getByTestId('snippet-claude');
  assert.equal(
    await claude.textContent(),
    `claude mcp add --scope user --transport http rerun ${server.origin}/api/mcp/account --header 'Authorization: Bearer \${RERUN_KEY}'`,
  );
  // Every client's setup parses and points at this server's live port.
  const endpoint = `${server.origin}/api/mcp/account`;
  const codex = await dlg.getByTestId('snippet-codex').textContent();
  assert.deepEqual(codex.split('\n'), ['[mcp_servers.rerun]', `url = "${endpoint}"`, 'bearer_token_env_var = "RERUN_KEY"']);
  const gemini = JSON.parse(await dlg.getByTestId('snippet-gemini').textContent());
  assert.deepEqual(gemini, { mcpServers: { rerun: { httpUrl: endpoint, headers: { Authorization: 'Bearer $RERUN_KEY' } } } });
  assert.ok((await dlg.getByTestId('snippet-curl').textContent()).startsWith(`curl -s ${endpoint} `));
  const exported = dlg.getByTestId('snippet-export');
  assert.equal(await exported.textContent(), 'export RERUN_KEY=rrk_…');
  await page.waitForTimeout(150);
  await page.screenshot({ path: shotPath('apikeys-empty.png') });

  // A nameless key is refused inline.
  await dlg.getByRole('button', { name: 'Create key' }).click();
  await dlg.getByTestId('key-create-error').waitFor();

  const nameField = dlg.getByLabel('New key');
  assert.match(await nameField.getAttribute('placeholder'), /Where is it used\?/);
  await nameField.fill('Claude Code');
  await dlg.getByRole('button', { name: 'Create key' }).click();
  const shown = dlg.getByTestId('new-key-value');
  await shown.waitFor();
  await dlg.getByTestId('key-create-error').waitFor({ state: 'detached' });
  const key = await shown.inputValue();
  assert.match(key, /^rrk_[a-z0-9]+$/);
  assert.equal(await shown.getAttribute('readonly'), '');
  await dlg.getByText('Copy it now: Rerun keeps only a fingerprint and cannot show it again.').waitFor();
  // The export line now carries the real key; the snippets never do, and Cursor's is valid JSON.
  assert.equal(await exported.textContent(), `export RERUN_KEY=${key}`);
  const cursor = JSON.parse(await dlg.getByTestId('snippet-cursor').textContent());
  assert.deepEqual(cursor, {
    mcpServers: { rerun: { url: `${server.origin}/api/mcp/account`, headers: { Authorization: 'Bearer ${env:RERUN_KEY}' } } },
  });
  const row = dlg.getByTestId('key-row').filter({ hasText: 'Claude Code' });
  const prefix = (await row.getByTestId('key-prefix').textContent()).trim();
  assert.ok(prefix.endsWith('…'));
  assert.ok(key.startsWith(prefix.slice(0, -1)), `${prefix} is the start of the key`);
  assert.equal((await row.getByTestId('key-last-used').textContent()).trim(), 'never');

  // Copy: the clipboard if allowed, else the text is selected for Ctrl+C; either way it says so.
  await dlg.getByTestId('copy-key').click();
  await dlg.getByTestId('copy-key').filter({ hasText: /Copied|Selected/ }).waitFor();
  await page.waitForTimeout(200);
  await page.screenshot({ path: shotPath('apikeys-created.png') });

  // The key works on the MCP endpoint.
  const ok = await callTool(key, 'list_spaces');
  assert.equal(ok.status, 200, ok.text);
  assert.ok(ok.body?.result, `a result: ${ok.text}`);
  assert.notEqual(ok.body.result.isError, true, ok.text);

  // The compact switch gives the key's client the 28 core tools; off again, all 45.
  const toolCount = async () => {
    const res = await fetch(`${server.origin}/api/mcp/account`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    return (await res.json()).result.tools.length;
  };
  assert.equal(await toolCount(), 45);
  const compact = row.getByTestId('key-compact');
  await compact.check();
  await until('the compact tool set', async () => (await toolCount()) === 28);
  await compact.uncheck();
  await until('all the tools again', async () => (await toolCount()) === 45);

  // Closed, then reopened (from the keyboard): the key is gone for good, its prefix stays.
  await dlg.getByRole('button', { name: 'Close' }).click();
  await dlg.waitFor({ state: 'detached' });
  dlg = await openKeys(page, { keyboard: true });
  await dlg.getByTestId('key-row').first().waitFor();
  assert.equal(await dlg.getByTestId('new-key').count(), 0);
  const html = await page.content();
  const values = await page.evaluate(() => [...document.querySelectorAll('input, textarea')].map((e) => e.value).join('\n'));
  assert.ok(!html.includes(key) && !values.includes(key), 'the key is nowhere on the page');
  assert.equal(await dlg.getByTestId('snippet-export').textContent(), 'export RERUN_KEY=rrk_…');
  const listed = dlg.getByTestId('key-row').filter({ hasText: prefix });
  assert.equal(await listed.count(), 1);
  assert.notEqual((await listed.getByTestId('key-last-used').textContent()).trim(), 'never', 'the call was recorded');

  // Revoke, after a warning.
  await listed.getByRole('button', { name: 'Revoke Claude Code' }).click();
  const confirm = page.getByTestId('revoke-key-dialog');
  await confirm.getByText('Apps using this key stop working at once').waitFor();
  await page.waitForTimeout(150);
  await page.screenshot({ path: shotPath('apikeys-revoke.png') });
  await confirm.getByRole('button', { name: 'Revoke key' }).click();
  await confirm.waitFor({ state: 'detached' });
  await listed.getByTestId('key-state').getByText(/^Revoked/).waitFor();
  assert.equal(await listed.getByRole('button', { name: /Revoke/ }).count(), 0);

  const refused = await callTool(key, 'list_spaces');
  assert.equal(refused.status, 401, refused.text);

  // Escape closes the dialog and gives the gear its focus back.
  await page.keyboard.press('Escape');
  await dlg.waitFor({ state: 'detached' });
  await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'open-settings');
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('dark: a new key and the connect snippets', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'dark' });
  const page = await openApp(context, server);
  const dlg = await openKeys(page);
  await dlg.getByTestId('key-row').first().waitFor(); // the revoked one from the first test
  await dlg.getByLabel('New key').fill('Cursor on my laptop');
  await dlg.getByLabel('New key').press('Enter');
  await dlg.getByTestId('new-key-value').waitFor();
  assert.equal(await dlg.getByTestId('key-row').count(), 2);
  await page.waitForTimeout(200);
  await page.screenshot({ path: shotPath('apikeys-dark.png') });
  await page.keyboard.press('Escape');
  await dlg.waitFor({ state: 'detached' });
  assert.deepEqual(page.errors, []);
  await context.close();
});
