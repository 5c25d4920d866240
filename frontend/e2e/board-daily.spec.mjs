// The board and the panel as a daily tool (issue 24): every panel section in
// view, a resizable panel, zoom and fit, names that open, Rename, undo after a
// move, the command palette, and paused automations drawn apart.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { agent, apiClient, box, dragAgentTo, launchBrowser, openApp, shoot, startServer, until } from './harness.mjs';

let server;
let browser;
let context;
let page;
let call;
let wsId;
/** The nine boxes' ids by name, and one agent on each: handles by box name. */
const boxes = {};
const handles = {};

before(async () => {
  server = await startServer();
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(20_000);
  call = apiClient(server);
  wsId = (await call('GET', '/api/workspaces')).current;
  const board = await call('GET', `/api/workspaces/${wsId}/board`);
  for (const b of board.boxes) boxes[b.name] = b.id;
  const names = ['Sales', 'Support', 'Research', 'Finance', 'Legal', 'Ops', 'Hiring', 'Design'];
  for (const n of names) if (!boxes[n]) boxes[n] = (await call('POST', `/api/workspaces/${wsId}/boxes`, { name: n })).id;
  const people = ['Ada Lovelace', 'Grace Hopper', 'Alan Turing', 'Edsger Dijkstra', 'Barbara Liskov', 'Donald Knuth', 'Frances Allen', 'Ken Thompson', 'Radia Perlman'];
  const boxNames = Object.keys(boxes);
  for (let i = 0; i < people.length; i++) {
    const a = await call('POST', `/api/workspaces/${wsId}/agents`, { name: people[i], box_id: boxes[boxNames[i % boxNames.length]] });
    handles[boxNames[i % boxNames.length]] ??= a.handle;
    handles[people[i]] = a.handle;
  }
  page = await openApp(context, server);
  await agent(page, handles['Radia Perlman']).waitFor();
});
after(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
});

async function openPanelOf(handle) {
  await agent(page, handle).locator('circle').first().click();
  await page.getByTestId('agent-panel').waitFor();
}

async function closeAnyPanel() {
  if (await page.getByTestId('agent-panel').count()) {
    await page.getByTestId('panel-close').click();
    await page.getByTestId('agent-panel').waitFor({ state: 'detached' });
  }
}

const zoomOf = async () => Number(await page.getByTestId('board').getAttribute('data-zoom'));

describe('board and panel as a daily tool', () => {
  test('every panel section is in view at 1024 px, with no sideways scrolling', async (t) => {
    await page.setViewportSize({ width: 1024, height: 768 });
    t.after(() => page.setViewportSize({ width: 1280, height: 800 }));
    await openPanelOf(handles['Ada Lovelace']);
    const report = await page.evaluate(() => {
      const panel = document.querySelector('[data-testid="agent-panel"]').getBoundingClientRect();
      return [...document.querySelectorAll('[data-testid="agent-panel"] [role="tab"]')].map((t) => {
        const r = t.getBoundingClientRect();
        const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        const scrollers = [];
        const panelEl = document.querySelector('[data-testid="agent-panel"]');
        for (let el = t.parentElement; el && el !== panelEl; el = el.parentElement) {
          if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'visible') scrollers.push(el.className);
        }
        return {
          name: t.textContent.trim(),
          inside: r.left >= panel.left && r.right <= panel.right && r.width > 0,
          hit: !!hit && t.contains(hit),
          scrollers,
        };
      });
    });
    assert.equal(report.length, 10, JSON.stringify(report));
    for (const t of report) {
      assert.ok(t.inside && t.hit, `tab ${t.name} is not fully in view: ${JSON.stringify(t)}`);
      assert.deepEqual(t.scrollers, [], `tab ${t.name} sits in a sideways scroller`);
    }
    await page.getByRole('tab', { name: 'Automations', exact: true }).click();
    await page.getByTestId('agent-panel').getByRole('tabpanel', { name: 'Automations' }).waitFor();
    await shoot(page, 'daily-panel-1024');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  test('the panel resizes by its edge and remembers the width', async () => {
    const panel = page.getByTestId('agent-panel');
    const before = (await panel.boundingBox()).width;
    const edge = await page.getByTestId('panel-resize').boundingBox();
    await page.mouse.move(edge.x + edge.width / 2, edge.y + 300);
    await page.mouse.down();
    await page.mouse.move(edge.x - 60, edge.y + 300, { steps: 4 });
    await page.mouse.move(edge.x - 120, edge.y + 300, { steps: 4 });
    await page.mouse.up();
    const wider = (await panel.boundingBox()).width;
    assert.ok(Math.abs(wider - (before + 120)) < 10, `panel ${before} → ${wider}, want +120`);
    // The board beside it shrinks with it.
    const board = await page.getByTestId('board').boundingBox();
    assert.ok(Math.abs(board.x + board.width - (1280 - wider)) < 2, `board right edge ${board.x + board.width}, panel left ${1280 - wider}`);
    // The keyboard resizes too.
    await page.getByTestId('panel-resize').focus();
    await page.keyboard.press('ArrowRight');
    const narrower = (await panel.boundingBox()).width;
    assert.ok(narrower < wider, `ArrowRight narrows: ${wider} → ${narrower}`);
    await page.reload();
    await openPanelOf(handles['Ada Lovelace']);
    const remembered = (await page.getByTestId('agent-panel').boundingBox()).width;
    assert.ok(Math.abs(remembered - narrower) < 2, `after a reload ${remembered}, want ${narrower}`);
    await page.getByTestId('panel-resize').focus();
    await page.keyboard.press('Home');
    await closeAnyPanel();
  });

  test('the board zooms with + − 0, Ctrl+wheel and its buttons; Fit shows all nine boxes', async () => {
    await page.locator('body').click({ position: { x: 5, y: 5 } }).catch(() => {});
    await page.getByTestId('board').focus().catch(() => {});
    const start = await zoomOf();
    assert.equal(start, 1);
    await page.keyboard.press('+');
    await until('zoom in', async () => (await zoomOf()) > 1);
    await page.keyboard.press('-');
    await page.keyboard.press('-');
    await until('zoom out', async () => (await zoomOf()) < 1);
    await page.getByTestId('zoom-reset').click();
    await until('back to 100 %', async () => (await zoomOf()) === 1);
    const b = await page.getByTestId('board').boundingBox();
    await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2);
    await page.keyboard.down('Control');
    await page.mouse.wheel(0, 200);
    await page.keyboard.up('Control');
    await until('Ctrl+wheel zooms out', async () => (await zoomOf()) < 1);
    await page.getByTestId('zoom-reset').click();

    // At 100 % nine boxes go on past the edge, and the board says so.
    await until('an edge shade', async () => (await page.locator('[data-testid^="board-more-"]').count()) > 0);
    await page.keyboard.press('0');
    await until('fit', async () => (await page.locator('[data-testid^="board-more-"]').count()) === 0);
    const view = await page.getByTestId('board').boundingBox();
    const rects = await page.locator('[data-testid="box"]').evaluateAll((els) => els.map((e) => e.getBoundingClientRect().toJSON()));
    assert.equal(rects.length, 9);
    for (const r of rects) {
      assert.ok(r.left >= view.x - 1 && r.right <= view.x + view.width + 1 && r.top >= view.y - 1 && r.bottom <= view.y + view.height + 1, `box ${JSON.stringify(r)} outside ${JSON.stringify(view)}`);
    }
    await shoot(page, 'daily-board-fit');
    await page.getByTestId('zoom-reset').click();
  });

  test('dragging the floor pans; the selected agent is kept in view', async () => {
    const scroller = page.getByTestId('board');
    await scroller.evaluate((el) => el.scrollTo(0, 0));
    const v = await scroller.boundingBox();
    // A spot of bare floor: nothing drawn or floating there.
    const [sx, sy] = await page.evaluate(() => {
      const r = document.querySelector('[data-testid="board"]').getBoundingClientRect();
      for (let y = r.bottom - 120; y > r.top + 80; y -= 20)
        for (let x = r.left + 220; x < r.right - 220; x += 20) {
          const el = document.elementFromPoint(x, y);
          if (el && !el.closest('[data-testid="box"], [data-testid="agent"], button, header, aside, .zoom, [class*="spot"], [class*="more"]') && el.closest('[data-testid="board"]'))
            return [x, y];
        }
      return [r.left + 300, r.bottom - 120];
    });
    void v;
    await page.mouse.move(sx, sy);
    await page.mouse.down();
    await page.mouse.move(sx - 40, sy - 30, { steps: 3 });
    await page.mouse.move(sx - 200, sy - 150, { steps: 6 });
    await page.mouse.up();
    const scrolled = await scroller.evaluate((el) => ({ x: el.scrollLeft, y: el.scrollTop }));
    assert.ok(scrolled.x > 0 || scrolled.y > 0, `panned ${JSON.stringify(scrolled)}`);

    // The last agent is off the view after scrolling to the start; opening it brings it in.
    await scroller.evaluate((el) => el.scrollTo(0, 0));
    const far = handles['Radia Perlman'];
    await page.keyboard.press('Control+k');
    await page.getByTestId('command-input').fill('Radia');
    await page.keyboard.press('Enter');
    await page.getByTestId('agent-panel').waitFor();
    await until('the selected agent in view', async () => {
      const r = await agent(page, far).locator('circle').first().boundingBox();
      const view = await scroller.boundingBox();
      return r && r.x >= view.x && r.x + r.width <= view.x + view.width && r.y >= view.y && r.y + r.height <= view.y + view.height;
    });
    await closeAnyPanel();
  });

  test('clicking an agent’s name or handle opens its panel', async () => {
    const h = handles['Grace Hopper'];
    await agent(page, h).scrollIntoViewIfNeeded();
    await agent(page, h).locator('text.name').click();
    await page.getByTestId('agent-panel').waitFor();
    assert.equal(await page.getByTestId('panel-agent-name').textContent(), 'Grace Hopper');
    await closeAnyPanel();
    await agent(page, h).locator('text.handle').click();
    await page.getByTestId('agent-panel').waitFor();
    await closeAnyPanel();
  });

  test('Rename in the agent’s menu; Delete is disabled on an occupied box, saying why', async () => {
    const h = handles['Alan Turing'];
    await agent(page, h).scrollIntoViewIfNeeded();
    await agent(page, h).locator('circle').first().click({ button: 'right' });
    await page.getByRole('menu').first().getByRole('menuitem', { name: 'Rename…' }).click();
    const dlg = page.getByTestId('rename-agent-dialog');
    await dlg.getByLabel('Name').fill('Alan M. Turing');
    await dlg.getByRole('button', { name: 'Rename' }).click();
    await dlg.waitFor({ state: 'detached' });
    await until('the new name on the board', async () => (await agent(page, h).locator('text.name').textContent()) === 'Alan M. Turing');

    const occupied = box(page, 'Sales');
    await occupied.scrollIntoViewIfNeeded();
    await occupied.locator('polygon.left').click({ button: 'right' });
    const del = page.getByRole('menu').first().getByRole('menuitem', { name: /Delete/ });
    assert.equal(await del.isDisabled(), true, 'Delete… is disabled on a box with coworkers');
    assert.match(await del.textContent(), /move its .*coworker/);
    await page.keyboard.press('Escape');
  });

  test('a move can be undone from its toast and with Ctrl+Z', async () => {
    const h = handles['Donald Knuth'];
    const from = await agent(page, h).getAttribute('data-box-id');
    await page.keyboard.press('0'); // fit: every box in reach of a drag
    const target = Object.keys(boxes).find((n) => boxes[n] !== from);
    await dragAgentTo(page, h, target);
    await until('moved', async () => (await agent(page, h).getAttribute('data-box-id')) === boxes[target]);
    await page.getByTestId('toast-action').filter({ hasText: 'Undo' }).first().click();
    await until('moved back by the toast', async () => (await agent(page, h).getAttribute('data-box-id')) === from);
    // The board moves at once; the server's copy follows the undo's request.
    await until('the server to have it back', async () => (await call('GET', `/api/workspaces/${wsId}/board`)).agents.find((a) => a.handle === h).box_id === from);

    await dragAgentTo(page, h, target);
    await until('moved again', async () => (await agent(page, h).getAttribute('data-box-id')) === boxes[target]);
    await page.keyboard.press('Control+z');
    await until('moved back by Ctrl+Z', async () => (await agent(page, h).getAttribute('data-box-id')) === from);
    await page.getByTestId('zoom-reset').click();
  });

  test('the command palette jumps to agents, tabs and settings, runs actions, and lists the shortcuts', async () => {
    await page.keyboard.press('Control+k');
    const palette = page.getByTestId('command-palette');
    await palette.waitFor();
    await palette.getByText('Keyboard shortcuts').waitFor();
    await palette.getByTestId('command-item').filter({ hasText: 'Command palette' }).waitFor();
    await shoot(page, 'daily-palette');
    await page.getByTestId('command-input').fill('barbara');
    await until('Barbara first', async () => (await palette.getByTestId('command-item').first().textContent()).includes('Barbara Liskov'));
    await page.keyboard.press('Enter');
    await palette.waitFor({ state: 'detached' });
    await until('Barbara’s panel', async () => (await page.getByTestId('panel-agent-name').textContent().catch(() => '')) === 'Barbara Liskov');

    await page.keyboard.press('Control+k');
    await page.getByTestId('command-input').fill('cron');
    await until('Automations found by a keyword', async () => (await palette.getByTestId('command-item').first().getAttribute('data-command')) === 'tab:automations');
    await page.keyboard.press('Enter');
    await until('the Automations tab', async () => (await page.getByRole('tab', { name: 'Automations', exact: true }).getAttribute('aria-selected')) === 'true');

    await page.keyboard.press('Control+k');
    await page.getByTestId('command-input').fill('pause all');
    await palette.locator('[data-command="action:hold"]').click();
    await until('paused', async () => (await page.getByTestId('pause-all').textContent()).trim() === 'Resume all');
    await page.getByTestId('pause-all').click();
    await until('resumed', async () => (await page.getByTestId('pause-all').textContent()).trim() === 'Pause all');

    await page.keyboard.press('Control+k');
    await page.getByTestId('command-input').fill('models');
    await palette.locator('[data-command="settings:Models"]').waitFor();
    await page.keyboard.press('Enter');
    await page.getByRole('dialog', { name: /Models/ }).waitFor();
    await page.keyboard.press('Escape');
    await closeAnyPanel();
  });

  test('paused schedules and triggers look different from active ones', async () => {
    const grace = (await call('GET', `/api/workspaces/${wsId}/board`)).agents.find((a) => a.handle === handles['Grace Hopper']);
    const base = `/api/workspaces/${wsId}`;
    const sch = await call('POST', `${base}/agents/${grace.id}/schedules`, {
      name: 'Digest',
      instruction: 'Post the digest.',
      kind: 'cron',
      cron: '0 9 * * 1-5',
      timezone: 'UTC',
    });
    const badge = agent(page, grace.handle).getByTestId('agent-scheduled');
    await badge.waitFor();
    assert.equal(await badge.getAttribute('data-paused'), null, 'an active schedule');
    const active = await badge.locator('circle').evaluate((c) => getComputedStyle(c).fill);
    await call('PATCH', `${base}/schedules/${sch.id}`, { enabled: false });
    await until('the badge shows paused', async () => (await badge.getAttribute('data-paused')) === 'true');
    const paused = await badge.locator('circle').evaluate((c) => getComputedStyle(c).fill);
    assert.notEqual(paused, active, 'a paused badge is drawn differently');
    assert.match(await agent(page, grace.handle).getAttribute('aria-label'), /1 scheduled task, paused/);
    await agent(page, grace.handle).scrollIntoViewIfNeeded();
    await shoot(page, 'daily-paused-badge');
    await call('PATCH', `${base}/schedules/${sch.id}`, { enabled: true });
    await until('active again', async () => (await badge.getAttribute('data-paused')) === null);
  });
});
