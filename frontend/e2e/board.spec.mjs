// The board against a real `rerun serve`: what a person clicks and drags.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  addAgent,
  addBox,
  agent,
  box,
  closePanel,
  dragAgentTo,
  launchBrowser,
  openApp,
  openTab,
  shotPath,
  startServer,
  PATIENCE,
} from './harness.mjs';

// The watcher never reloads: only a live update shows it the change. How
// soon is for benchmarks; a loaded machine may take long.
const LIVE_MS = PATIENCE;

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

const boxIdOf = (page, name) => box(page, name).getAttribute('data-box-id');
const boxOfAgent = (page, handle) => agent(page, handle).getAttribute('data-box-id');

async function waitForBoxOf(page, handle, boxId, timeout = LIVE_MS) {
  await page.waitForFunction(
    ([h, b]) => document.querySelector(`[data-agent-handle="${h}"]`)?.getAttribute('data-box-id') === b,
    [handle, boxId],
    { timeout, polling: 50 },
  );
}

async function contextMenuOn(locator) {
  // A box's middle is usually covered by its agents: right-click its front edge.
  const target = (await locator.getAttribute('data-testid')) === 'box' ? locator.locator('polygon.left') : locator;
  await target.click({ button: 'right' });
  const menu = locator.page().getByRole('menu').first();
  await menu.waitFor();
  return menu;
}

describe('board', () => {
  let page;
  let watcher;
  let ada;
  let grace;
  const soul = '# Grace\n\nYou write **compilers**.\n\n- Be precise\n- <script>not html</script>';

  test('create a box and two agents; a second page sees them live', async () => {
    page = await openApp(context, server);
    watcher = await openApp(context, server);
    // Only the page in front gets animation frames at full speed; the watcher
    // still gets events and updates its DOM in the background.
    await page.bringToFront();
    await addBox(page, 'Research');
    assert.equal(await box(watcher, 'Research').count() + (await box(watcher, 'Research').waitFor({ timeout: LIVE_MS }), 0), 1);

    ada = await addAgent(page, 'Ada Lovelace', 'Main');
    assert.equal(ada, 'ada-lovelace');
    assert.equal(await page.getByTestId('panel-agent-name').textContent(), 'Ada Lovelace');
    await closePanel(page);
    grace = await addAgent(page, 'Grace Hopper', 'Main');
    await closePanel(page);

    const main = await boxIdOf(page, 'Main');
    assert.equal(await boxOfAgent(page, ada), main);
    assert.equal(await boxOfAgent(page, grace), main);
    await agent(watcher, grace).waitFor({ timeout: LIVE_MS });
  });

  test('dragging an agent onto another box moves it, live in the second page', async () => {
    const research = await boxIdOf(page, 'Research');
    await dragAgentTo(page, ada, 'Research');
    await waitForBoxOf(page, ada, research);
    await waitForBoxOf(watcher, ada, research); // no reload
    assert.equal(await watcher.evaluate(() => performance.getEntriesByType('navigation').length), 1);
    await page.screenshot({ path: shotPath('after-drag.png') });
  });

  test('editing the soul in Settings and saving keeps a version', async () => {
    await agent(page, grace).click();
    const panel = page.getByTestId('agent-panel');
    await panel.waitFor();
    await openTab(page, 'Settings');
    await panel.getByTestId('soul-editor').fill(soul);
    assert.equal(await panel.getByTestId('save-status').textContent(), 'Unsaved changes');
    await panel.getByRole('button', { name: 'Save' }).click();
    await panel.getByTestId('save-status').getByText('Saved').waitFor();

    await panel.getByRole('button', { name: 'Preview' }).click();
    const preview = panel.getByTestId('soul-preview');
    assert.equal(await preview.locator('strong').textContent(), 'compilers');
    assert.equal(await preview.locator('script').count(), 0, 'raw HTML in a soul must not become elements');
    assert.match(await preview.textContent(), /<script>not html<\/script>/);

    await panel.getByTestId('soul-history-toggle').click();
    await panel.getByTestId('soul-history').locator('button').first().waitFor();
    await page.screenshot({ path: shotPath('soul-saved.png') });
  });

  test('after a reload everything is still there', async () => {
    await page.reload();
    await agent(page, grace).waitFor();
    assert.equal(await box(page, 'Research').count(), 1);
    assert.equal(await boxOfAgent(page, ada), await boxIdOf(page, 'Research'));
    assert.equal(await boxOfAgent(page, grace), await boxIdOf(page, 'Main'));
    await agent(page, grace).click();
    await openTab(page, 'Settings'); // a new page opens Chat first, then remembers the tab
    assert.equal(await page.getByTestId('soul-editor').inputValue(), soul);
    await closePanel(page);
    assert.deepEqual(page.errors, []);
    assert.deepEqual(watcher.errors, []);
  });

  test('context menu: Move to Box', async () => {
    const menu = await contextMenuOn(agent(page, grace));
    await menu.getByRole('menuitem', { name: 'Move to Box' }).click();
    const sub = page.getByRole('menu', { name: 'Move to Box' });
    await sub.getByRole('menuitem', { name: 'Research' }).click();
    const research = await boxIdOf(page, 'Research');
    await waitForBoxOf(page, grace, research);
    await waitForBoxOf(watcher, grace, research);
  });

  test('keyboard: Shift+F10 on a focused agent opens its menu; Enter opens the panel; Escape closes', async () => {
    await agent(page, grace).focus();
    await page.keyboard.press('Shift+F10');
    await page.getByRole('menu').first().waitFor();
    await page.keyboard.press('ArrowDown'); // Rename…
    await page.keyboard.press('ArrowDown'); // Move to Box
    await page.keyboard.press('ArrowRight');
    await page.getByRole('menu', { name: 'Move to Box' }).waitFor();
    await page.keyboard.press('Enter'); // the only other box: Main
    const main = await boxIdOf(page, 'Main');
    await waitForBoxOf(page, grace, main);

    await agent(page, grace).focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('agent-panel').waitFor();
    await page.keyboard.press('Escape');
    await page.getByTestId('agent-panel').waitFor({ state: 'detached' });
  });

  test('rename and delete a box', async () => {
    await addBox(page, 'Temp');
    let menu = await contextMenuOn(box(page, 'Temp'));
    await menu.getByRole('menuitem', { name: 'Rename…' }).click();
    const dlg = page.getByTestId('rename-box-dialog');
    await dlg.getByLabel('Box name').fill('Scratch');
    await dlg.getByRole('button', { name: 'Rename' }).click();
    await box(page, 'Scratch').waitFor();
    assert.equal(await box(page, 'Temp').count(), 0);
    await box(watcher, 'Scratch').waitFor({ timeout: LIVE_MS });

    menu = await contextMenuOn(box(page, 'Scratch'));
    await menu.getByRole('menuitem', { name: 'Delete…' }).click();
    await page.getByTestId('delete-box-dialog').getByRole('button', { name: 'Delete box' }).click();
    await box(page, 'Scratch').waitFor({ state: 'detached' });
    await box(watcher, 'Scratch').waitFor({ state: 'detached', timeout: LIVE_MS });
  });

  test('a box that has agents cannot be deleted: its Delete is disabled, saying why', async () => {
    const menu = await contextMenuOn(box(page, 'Research'));
    const del = menu.getByRole('menuitem', { name: /Delete/ });
    assert.equal(await del.isDisabled(), true);
    assert.match(await del.textContent(), /move its .*coworker/);
    await page.keyboard.press('Escape');
    assert.equal(await box(page, 'Research').count(), 1);
  });

  test('settings: name, model and capabilities save; handle is read-only', async () => {
    await agent(page, ada).click();
    const panel = page.getByTestId('agent-panel');
    assert.equal(await panel.getByLabel('Handle').getAttribute('readonly'), '');
    await panel.getByLabel('Name', { exact: true }).fill('Ada King');
    await panel.getByLabel('Provider', { exact: true }).selectOption('anthropic');
    await panel.getByLabel('Model ID').fill('claude-sonnet-4-5');
    const shell = panel.locator('[role="switch"][data-capability="shell"]');
    const before = await shell.getAttribute('aria-checked');
    await shell.click();
    await panel.getByRole('button', { name: 'Save' }).click();
    await panel.getByTestId('save-status').getByText('Saved').waitFor();

    await page.reload();
    await agent(page, ada).click();
    await openTab(page, 'Settings');
    assert.equal(await panel.getByLabel('Name', { exact: true }).inputValue(), 'Ada King');
    assert.equal(await panel.getByLabel('Provider', { exact: true }).inputValue(), 'anthropic');
    assert.equal(await panel.getByLabel('Model ID').inputValue(), 'claude-sonnet-4-5');
    assert.notEqual(await shell.getAttribute('aria-checked'), before);
    assert.equal(await agent(page, ada).getAttribute('aria-label'), 'Ada King @ada-lovelace on Research');
    await closePanel(page);
  });

  test('unsaved edits: switching agents or closing the panel asks first', async () => {
    const panel = page.getByTestId('agent-panel');
    const nameField = panel.getByLabel('Name', { exact: true });
    const leaving = () =>
      page.evaluate(() => {
        const ev = new Event('beforeunload', { cancelable: true });
        window.dispatchEvent(ev);
        return ev.defaultPrevented;
      });
    await agent(page, ada).click();
    const adaId = await agent(page, ada).getAttribute('data-agent-id');
    await nameField.fill('Ada Unsaved');
    assert.equal(await leaving(), true, 'leaving the page with unsaved edits should ask');

    // Clicking another figure: Keep editing stays on Ada with the edit.
    await agent(page, grace).click();
    const dlg = page.getByTestId('discard-dialog');
    await dlg.getByRole('heading', { name: 'Discard unsaved changes to Ada King?' }).waitFor();
    assert.match(await dlg.textContent(), /edits to the name have not been saved/);
    await page.waitForTimeout(200); // the dialog fades in
    await page.screenshot({ path: shotPath('discard-dialog.png') });
    await dlg.getByRole('button', { name: 'Keep editing' }).click();
    await dlg.waitFor({ state: 'detached' });
    assert.equal(await panel.getAttribute('data-agent-id'), adaId);
    assert.equal(await nameField.inputValue(), 'Ada Unsaved');

    // Escape asks too; Escape again keeps editing.
    await nameField.focus();
    await page.keyboard.press('Escape');
    await dlg.waitFor();
    await page.keyboard.press('Escape');
    await dlg.waitFor({ state: 'detached' });
    assert.equal(await nameField.inputValue(), 'Ada Unsaved');

    // Discard switches to Grace and drops the edit.
    await agent(page, grace).click();
    await dlg.getByRole('button', { name: 'Discard' }).click();
    await dlg.waitFor({ state: 'detached' });
    await panel.getByTestId('panel-agent-name').getByText('Grace Hopper').waitFor();
    assert.equal(await nameField.inputValue(), 'Grace Hopper');
    assert.equal(await leaving(), false);
    await agent(page, ada).click();
    await panel.getByTestId('panel-agent-name').getByText('Ada King').waitFor();
    assert.equal(await nameField.inputValue(), 'Ada King');

    // The close button asks; Discard closes. Without edits it closes at once.
    await nameField.fill('Ada Again');
    await page.getByTestId('panel-close').click();
    await dlg.getByRole('button', { name: 'Discard' }).click();
    await panel.waitFor({ state: 'detached' });
    await agent(page, ada).click();
    assert.equal(await nameField.inputValue(), 'Ada King');
    await closePanel(page);
    assert.deepEqual(page.errors, []);
  });

  test('restore an earlier soul version', async () => {
    await agent(page, grace).click();
    const panel = page.getByTestId('agent-panel');
    await panel.getByTestId('soul-editor').fill('# Grace v2');
    await panel.getByRole('button', { name: 'Save' }).click();
    await panel.getByTestId('save-status').getByText('Saved').waitFor();
    await panel.getByTestId('soul-history-toggle').click();
    // newest first: [0] is "# Grace v2", [1] the soul saved before it
    await panel.locator('[data-testid="soul-history"] button').nth(1).click();
    const dlg = page.getByTestId('soul-version-dialog');
    await dlg.getByRole('button', { name: 'Restore this version' }).click();
    await dlg.waitFor({ state: 'detached' });
    assert.equal(await panel.getByTestId('soul-editor').inputValue(), soul);
    await page.reload();
    await agent(page, grace).click();
    await openTab(page, 'Settings');
    assert.equal(await panel.getByTestId('soul-editor').inputValue(), soul);
  });

  test('delete a coworker after confirming', async () => {
    const handle = await addAgent(page, 'Short Lived', 'Main');
    const panel = page.getByTestId('agent-panel');
    await panel.getByRole('button', { name: 'Delete coworker…' }).click();
    const dlg = page.getByTestId('delete-agent-dialog');
    assert.match(await dlg.textContent(), /private folder and database/);
    await dlg.getByRole('button', { name: 'Delete coworker' }).click();
    await agent(page, handle).waitFor({ state: 'detached' });
    await panel.waitFor({ state: 'detached' });
    await agent(watcher, handle).waitFor({ state: 'detached', timeout: LIVE_MS });
  });

  test('workspaces: create, switch, rename', async () => {
    const pill = page.getByTestId('workspace-pill');
    const first = (await page.getByTestId('workspace-name').textContent()).trim();
    await pill.click();
    await page.getByRole('menuitem', { name: 'New workspace…' }).click();
    let dlg = page.getByTestId('new-workspace-dialog');
    await dlg.getByLabel('Workspace name').fill('Side Project');
    await dlg.getByRole('button', { name: 'Create workspace' }).click();
    await page.getByTestId('workspace-name').getByText('Side Project').waitFor();
    await box(page, 'Main').waitFor();
    assert.equal(await page.locator('[data-testid="agent"]').count(), 0);

    await pill.click();
    await page.getByRole('menuitem', { name: 'Rename “Side Project”…' }).click();
    dlg = page.getByTestId('rename-workspace-dialog');
    await dlg.getByLabel('Workspace name').fill('Side Hustle');
    await dlg.getByRole('button', { name: 'Rename' }).click();
    await page.getByTestId('workspace-name').getByText('Side Hustle').waitFor();

    await pill.click();
    await page.getByRole('menuitemradio', { name: first }).click();
    await page.getByTestId('workspace-name').getByText(first).waitFor();
    await agent(page, grace).waitFor();

    // The other page still shows the first workspace and learns the new name.
    await watcher.bringToFront();
    await watcher.getByTestId('workspace-pill').click();
    await watcher.getByRole('menuitemradio', { name: 'Side Hustle' }).waitFor({ timeout: LIVE_MS });
    await watcher.keyboard.press('Escape');
    assert.equal((await watcher.getByTestId('workspace-name').textContent()).trim(), first);
    assert.deepEqual(page.errors, []);
    assert.deepEqual(watcher.errors, []);
  });
});
