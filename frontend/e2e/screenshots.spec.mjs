// Screenshots of a full board (3 boxes, 8 agents) in light and dark, for people
// to look at; also checks that everything seeded is drawn.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { agent, box, launchBrowser, openApp, openTab, shotPath, startServer } from './harness.mjs';

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

/** Seeds through the HTTP API as the UI would (bearer token instead of the cookie). */
async function seed() {
  const token = new URL(server.url).searchParams.get('token');
  const call = async (method, path, body) => {
    const res = await fetch(server.origin + path, {
      method,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  const { current } = await call('GET', '/api/workspaces');
  await call('PATCH', `/api/workspaces/${current}`, { name: 'Acme Robotics' });
  const board = await call('GET', `/api/workspaces/${current}/board`);
  const main = board.boxes[0];
  await call('PATCH', `/api/workspaces/${current}/boxes/${main.id}`, { name: 'Leadership' });
  const sales = await call('POST', `/api/workspaces/${current}/boxes`, { name: 'Sales & Growth' });
  const eng = await call('POST', `/api/workspaces/${current}/boxes`, { name: 'Engineering' });
  const people = [
    ['Ada Lovelace', main.id],
    ['Grace Hopper', main.id],
    ['Margaret Hamilton', eng.id],
    ['Linus', eng.id],
    ['Ken Thompson', eng.id],
    ['Barbara Liskov', eng.id],
    ['Don Draper', sales.id],
    ['Peggy Olson', sales.id],
  ];
  for (const [name, box_id] of people) await call('POST', `/api/workspaces/${current}/agents`, { name, box_id });
}

test('a fresh workspace invites the first coworker', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await openApp(context, server);
  await page.getByRole('button', { name: '+ Add your first coworker' }).waitFor();
  await page.screenshot({ path: shotPath('empty-light.png') });
  await page.getByRole('button', { name: '+ Add your first coworker' }).click();
  await page.getByTestId('new-agent-dialog').getByLabel('Name').fill('Ada Lovelace');
  await page.getByTestId('handle-preview').getByText('@ada-lovelace').waitFor();
  await page.screenshot({ path: shotPath('new-agent-dialog.png') });
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('a board with 3 boxes and 8 agents, light and dark', async () => {
  await seed();
  for (const scheme of ['light', 'dark']) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: scheme });
    const page = await openApp(context, server);
    await page.locator('[data-testid="agent"]').nth(7).waitFor();
    assert.equal(await page.locator('[data-testid="box"]').count(), 3);
    assert.equal(await page.locator('[data-testid="agent"]').count(), 8);
    assert.equal(await box(page, 'Sales & Growth').count(), 1);
    await page.screenshot({ path: shotPath(`board-${scheme}.png`) });

    // Mid-drag: the lifted figure follows the pointer and the box under it lights up;
    // Escape cancels without moving.
    const from = await agent(page, 'linus').locator('circle').first().boundingBox();
    const to = await box(page, 'Sales & Growth').locator('polygon.left').boundingBox();
    await page.mouse.move(from.x + 5, from.y + 5);
    await page.mouse.down();
    await page.mouse.move(to.x + to.width / 2, to.y - 30, { steps: 12 });
    await page.locator('.slab.drop').waitFor();
    await page.screenshot({ path: shotPath(`dragging-${scheme}.png`) });
    await page.keyboard.press('Escape');
    await page.mouse.up();
    assert.equal(await page.locator('.slab.drop').count(), 0);
    assert.equal(await agent(page, 'linus').getAttribute('data-box-id'), await box(page, 'Engineering').getAttribute('data-box-id'));

    await agent(page, 'ada-lovelace').click();
    await page.getByTestId('agent-panel').waitFor();
    await openTab(page, 'Settings');
    await page.getByTestId('soul-editor').fill('# Ada\n\nYou are the **chief analyst**. Keep answers short.\n\n- Check numbers twice\n- Cite sources');
    await page.waitForTimeout(250); // the panel slides in
    await page.screenshot({ path: shotPath(`panel-${scheme}.png`) });

    await agent(page, 'linus').click({ button: 'right' });
    await page.getByRole('menuitem', { name: 'Move to Box' }).hover();
    await page.getByRole('menu', { name: 'Move to Box' }).waitFor();
    await page.waitForTimeout(200); // let the menus finish appearing
    await page.screenshot({ path: shotPath(`menu-${scheme}.png`) });
    assert.deepEqual(page.errors, []);
    await context.close();
  }
});
