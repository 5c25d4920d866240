// The Desktop tab against a real `rerun serve`, its real headless Chromium and
// the fake model server: the agent opens a page served by this test, the panel
// shows it live, the person takes over and clicks and types on it through the
// panel (at two panel shapes), and hands back; a takeover card opens the
// Desktop; the Desktops grid watches every running browser; the screen
// enlarged to the window (real size, and scaled down in a small window) takes
// clicks exactly where they are aimed, and its address bar browses; popped out
// into a window of its own, the screen is live there and takes the person's
// clicks.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { agent, apiClient, axeClean, launchBrowser, openApp, openTab, PATIENCE, shoot, startFakeLLM, startServer, until } from './harness.mjs';

// The agent's pages: a big blue button that leads to a green page (title
// "Clicked") with a field; Enter in it sends the name to a page titled with it.
const STYLE = `<style>
  body { margin: 0; font: 20px sans-serif; background: #ffffff; }
  body.done { background: #16a34a; color: #fff; }
  #go { position: absolute; left: 40px; top: 40px; width: 260px; height: 120px; font-size: 26px; background: #2563eb; color: #fff; border: 0; }
  #name { position: absolute; left: 40px; top: 220px; width: 360px; height: 48px; font-size: 22px; }
</style>`;
const html = (title, body) => `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title>${STYLE}</head>${body}</html>`;
const escape = (s) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

// The enlarge pages: a button at a known place; every click on the page is
// recorded (what it hit and where, in the page's CSS pixels), every load of a
// page counted.
const TARGET = { left: 500, top: 300, width: 200, height: 120 };
const record = `<script>addEventListener('click', (e) => fetch('/click?on=' + encodeURIComponent(e.target.id || e.target.tagName) + '&x=' + e.clientX + '&y=' + e.clientY));</script>`;
const clicks = [];
const loads = {};

function sitePage(url) {
  const u = new URL(url, 'http://x');
  if (u.pathname === '/target') {
    const b = TARGET;
    return html('Target', `<body><button id="hit" style="position:absolute;left:${b.left}px;top:${b.top}px;width:${b.width}px;height:${b.height}px;background:#2563eb;color:#fff;border:0;font-size:22px">Hit me</button>${record}</body>`);
  }
  if (u.pathname === '/second') return html('Second', `<body><h1>Second page</h1>${record}</body>`);
  if (u.pathname === '/done') {
    return html('Clicked', '<body class="done"><form action="/hello"><input id="name" name="name" placeholder="Your name"></form></body>');
  }
  if (u.pathname === '/hello') {
    const name = escape(u.searchParams.get('name') ?? '');
    return html(`Hello ${name}`, `<body class="done"><p>Hello ${name}</p></body>`);
  }
  return html('Before', `<body><button id="go" onclick="location.href='/done'">Press me</button></body>`);
}

let site;
let siteUrl;
let llm;
let server;
let browser;
let context;
let call;
let wsId;

before(async () => {
  site = createServer((req, res) => {
    const u = new URL(req.url, 'http://x');
    if (u.pathname === '/click') {
      clicks.push({ on: u.searchParams.get('on'), x: Number(u.searchParams.get('x')), y: Number(u.searchParams.get('y')) });
      res.writeHead(204);
      res.end();
      return;
    }
    loads[u.pathname] = (loads[u.pathname] ?? 0) + 1;
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
    res.end(sitePage(req.url));
  });
  await new Promise((r) => site.listen(0, '127.0.0.1', r));
  siteUrl = `http://127.0.0.1:${site.address().port}/form`;
  llm = await startFakeLLM();
  server = await startServer({ llm });
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 860 }, bypassCSP: true }); // axe is injected
  call = apiClient(server);
  wsId = (await call('GET', '/api/workspaces')).current;
});
after(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop(); // closes the agents' browsers too
  await llm?.stop();
  await new Promise((r) => site?.close(r));
});

async function say(page, text) {
  const input = page.getByTestId('chat-input');
  await input.fill(text);
  await input.press('Enter');
}

/** Makes the fake model call a tool, once the last run ended. */
async function useTool(page, name, args) {
  await page.getByTestId('chat-status').waitFor({ state: 'detached' });
  await say(page, `use tool ${name} ${JSON.stringify(args)}`);
}

/** Where a point of the agent's page (its CSS pixels) is on this page: the screen is letterboxed. */
async function onScreen(page, x, y, testid = 'screen') {
  return page.getByTestId(testid).evaluate(
    (el, [x, y]) => {
      const c = el.querySelector('canvas').getBoundingClientRect();
      const fw = Number(el.dataset.frameWidth);
      const fh = Number(el.dataset.frameHeight);
      const s = Math.min(c.width / fw, c.height / fh);
      return { x: c.left + (c.width - fw * s) / 2 + x * s, y: c.top + (c.height - fh * s) / 2 + y * s };
    },
    [x, y],
  );
}

/** The colour of the screen's canvas at a point of the agent's page. */
async function pixel(page, x, y, testid = 'screen') {
  return page.getByTestId(testid).evaluate(
    (el, [x, y]) => {
      const canvas = el.querySelector('canvas');
      const c = canvas.getBoundingClientRect();
      const fw = Number(el.dataset.frameWidth);
      const fh = Number(el.dataset.frameHeight);
      const s = Math.min(c.width / fw, c.height / fh);
      const k = canvas.width / c.width;
      const px = Math.round(((c.width - fw * s) / 2 + x * s) * k);
      const py = Math.round(((c.height - fh * s) / 2 + y * s) * k);
      return [...canvas.getContext('2d').getImageData(px, py, 1, 1).data];
    },
    [x, y],
  );
}

const near = (got, want, tol = 40) => got.slice(0, 3).every((v, i) => Math.abs(v - want[i]) <= tol) && got[3] > 200;

/** Waits until the canvas shows `want` (r, g, b) at a point of the agent's page. */
async function waitForColour(page, x, y, want, testid = 'screen') {
  let got;
  for (const end = Date.now() + PATIENCE; Date.now() < end; ) {
    got = await pixel(page, x, y, testid);
    if (near(got, want)) return;
    await page.waitForTimeout(100);
  }
  assert.fail(`the screen at (${x}, ${y}) is rgba(${got}), want about rgb(${want})`);
}

const BLUE = [37, 99, 235];
const GREEN = [22, 163, 74];
const WHITE = [255, 255, 255];

describe('desktop', () => {
  let page;
  let ada;

  test('the agent opens a page: the Desktop tab shows it live, with its address and last action', async () => {
    const board = await call('GET', `/api/workspaces/${wsId}/board`);
    ada = await call('POST', `/api/workspaces/${wsId}/agents`, {
      name: 'Ada Lovelace',
      box_id: board.boxes[0].id,
      capabilities: ['browser'],
    });
    page = await openApp(context, server);
    await agent(page, ada.handle).click();
    await openTab(page, 'Desktop');
    const tab = page.getByTestId('desktop-tab');
    await tab.getByTestId('desktop-off').getByText('Browser not started').waitFor();
    await tab.getByTestId('browser-start').waitFor();
    await shoot(page, 'desktop-off');

    await openTab(page, 'Chat');
    await useTool(page, 'browser_open', { url: siteUrl });
    await page.getByTestId('msg-agent').filter({ hasText: 'Tool said:' }).waitFor();

    await openTab(page, 'Desktop');
    await tab.getByTestId('desktop-state').getByText('Ada Lovelace is using its browser').waitFor();
    await tab.getByTestId('desktop-title').getByText('Before').waitFor();
    assert.match(await tab.getByTestId('nav-address').inputValue(), /^http:\/\/127\.0\.0\.1:\d+\/form$/);
    // Not holding the browser: the address bar shows where the agent is, and browses nothing.
    assert.equal(await tab.getByTestId('nav-back').isDisabled(), true);
    assert.equal(await tab.getByTestId('nav-reload').getAttribute('title'), 'Take over to browse');
    assert.equal(await tab.getByTestId('nav-address').getAttribute('readonly'), '');
    assert.match(await tab.getByTestId('desktop-last-action').textContent(), /opened/i);
    assert.equal(await tab.getByTestId('take-over').isVisible(), true);

    // Frames arrive and are drawn, letterboxed: the blue button and the white page.
    const screen = tab.getByTestId('screen');
    await page.waitForFunction(() => Number(document.querySelector('[data-testid="screen"]')?.dataset.frames) > 0);
    assert.ok(Number(await screen.getAttribute('data-frame-width')) > 300);
    await waitForColour(page, 52, 52, BLUE);
    await waitForColour(page, 600, 500, WHITE);
    await shoot(page, 'desktop-live');
    assert.deepEqual(page.errors, []);
  });

  test('take over: a click through the panel presses the button on the page; hand back', async () => {
    const tab = page.getByTestId('desktop-tab');
    await tab.getByTestId('take-over').click();
    await tab.getByTestId('desktop-state').getByText('You have the browser').waitFor();
    await tab.getByTestId('hand-back').waitFor();
    await tab.getByTestId('desktop-control-note').waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'screen-keys', 'the keyboard goes to the page');

    const at = await onScreen(page, 170, 100);
    await page.mouse.click(at.x, at.y);
    await tab.getByTestId('desktop-title').getByText('Clicked').waitFor();
    await waitForColour(page, 600, 500, GREEN);

    // Escape goes to the page, not to the panel (which would close).
    await page.keyboard.press('Escape');
    await page.waitForTimeout(200);
    assert.equal(await page.getByTestId('agent-panel').count(), 1);
    await shoot(page, 'desktop-control');

    // A short window: the screen gets less height than the page's shape wants, so the picture has bars left and right.
    await page.setViewportSize({ width: 1000, height: 520 });
    await page.waitForTimeout(300);
    const field = await onScreen(page, 200, 244);
    const left = await onScreen(page, 0, 0);
    const box = await tab.getByTestId('screen').locator('canvas').boundingBox();
    assert.ok(left.x > box.x + 20, `a bar left of the picture: it starts at ${left.x}, the screen at ${box.x}`);
    await page.mouse.click(field.x, field.y);
    await page.keyboard.type('Adaa');
    await page.keyboard.press('Backspace');
    await shoot(page, 'desktop-short');
    await page.keyboard.press('Enter');
    await tab.getByTestId('desktop-title').getByText('Hello Ada', { exact: true }).waitFor();
    await page.setViewportSize({ width: 1280, height: 860 });

    await tab.getByTestId('hand-back').click();
    await tab.getByTestId('desktop-state').getByText('Ada Lovelace is using its browser').waitFor();
    await tab.getByTestId('take-over').waitFor();
    const state = await call('GET', `/api/workspaces/${wsId}/agents/${ada.id}/browser`);
    assert.equal(state.in_control, false);
    assert.equal(state.title, 'Hello Ada');
    assert.match(state.url, /\/hello\?name=Ada$/);
    assert.deepEqual(page.errors, []);
  });

  test('a takeover card: Open Desktop takes over; Hand back answers it and the run goes on', async () => {
    await openTab(page, 'Chat');
    await useTool(page, 'request_takeover', { reason: 'Solve the captcha on the sign-in page.' });
    const card = page.locator('[data-testid="pause-card"][data-kind="takeover"]');
    await card.waitFor();
    assert.equal(await card.locator('h3').textContent(), `@${ada.handle} needs your hands: Solve the captcha on the sign-in page.`);
    assert.match(await card.getByTestId('takeover-url').textContent(), /127\.0\.0\.1:\d+\/hello\?name=Ada/);
    await page.getByTestId('chat-pause').getByText('Asked you to take over: Solve the captcha on the sign-in page.').waitFor();
    await shoot(page, 'pause-takeover');

    await page.getByTestId('tab-handle').click(); // its name carries the count
    const row = page.getByTestId('tohandle-pause').filter({ hasText: 'needs your hands' });
    await row.getByText('Take over in Desktop').waitFor();
    await openTab(page, 'Chat');

    await card.getByTestId('open-desktop').click();
    const tab = page.getByTestId('desktop-tab');
    await tab.waitFor();
    assert.equal(await page.getByTestId('tab-desktop').getAttribute('aria-selected'), 'true');
    await tab.getByTestId('hand-back').waitFor();
    await tab.locator('[data-testid="desktop-state"]').filter({ hasText: /you have the browser/i }).waitFor();

    await tab.getByTestId('hand-back').click();
    await tab.getByTestId('take-over').waitFor();
    await openTab(page, 'Chat');
    await card.waitFor({ state: 'detached' });
    await page.getByTestId('transcript').getByTestId('chat-resume').getByText('You handed back').waitFor();
    await page.getByTestId('msg-agent').filter({ hasText: /Tool said:.*handed/i }).waitFor();
    assert.deepEqual(page.errors, []);
  });

  test('the Desktops grid shows each running browser live; a tile opens its Desktop tab', async () => {
    const board = await call('GET', `/api/workspaces/${wsId}/board`);
    const bob = await call('POST', `/api/workspaces/${wsId}/agents`, { name: 'Bob Idle', box_id: board.boxes[0].id, capabilities: ['browser'] });
    await page.getByTestId('panel-close').click();
    await page.getByTestId('open-desktops').click();
    const grid = page.getByTestId('desktops-grid');
    const tile = grid.locator(`[data-testid="desktop-tile"][data-agent-id="${ada.id}"]`);
    await tile.waitFor();
    assert.equal(await grid.locator(`[data-testid="desktop-tile"][data-agent-id="${bob.id}"]`).count(), 0, 'a browser not started has no tile');
    await grid.getByText(/Not running: (.*, )?Bob Idle/).waitFor(); // the Foreman has a browser too
    await page.waitForFunction(() => Number(document.querySelector('[data-testid="tile-screen"]')?.dataset.frames) > 0);
    await waitForColour(page, 600, 500, GREEN, 'tile-screen');
    await shoot(page, 'desktops-grid');

    await tile.click();
    await grid.waitFor({ state: 'detached' });
    await page.getByTestId('agent-panel').waitFor();
    assert.equal(await page.getByTestId('agent-panel').getAttribute('data-agent-id'), ada.id);
    assert.equal(await page.getByTestId('tab-desktop').getAttribute('aria-selected'), 'true');
    await page.getByTestId('desktop-tab').getByTestId('take-over').waitFor();
    assert.deepEqual(page.errors, []);
  });

  test('enlarged: clicks land where aimed at the panel size, the real size and scaled down; the address bar browses', async () => {
    const tab = page.getByTestId('desktop-tab');
    const base = `http://127.0.0.1:${site.address().port}`;
    await tab.getByTestId('take-over').click();
    await tab.getByTestId('hand-back').waitFor();

    // The address bar takes the browser to the target page.
    const address = tab.getByTestId('nav-address');
    await address.click();
    await address.fill(`${base}/target`);
    await address.press('Enter');
    await tab.getByTestId('desktop-title').getByText('Target', { exact: true }).waitFor();
    assert.equal(await address.inputValue(), `${base}/target`);
    await waitForColour(page, 600, 360, BLUE);

    /** Clicks the page point (x, y) through the screen `testid`; the page must record a click on the button there. */
    const aim = { x: TARGET.left + 100, y: TARGET.top + 60 };
    async function clickTarget(testid, tol) {
      const n = clicks.length;
      const at = await onScreen(page, aim.x, aim.y, testid);
      await page.mouse.click(at.x, at.y);
      const got = await until(`the click through ${testid}`, () => clicks.length > n && clicks[n]);
      assert.equal(got.on, 'hit', `the click through ${testid} landed on ${got.on} at (${got.x}, ${got.y})`);
      assert.ok(Math.abs(got.x - aim.x) <= tol && Math.abs(got.y - aim.y) <= tol, `the click through ${testid} landed at (${got.x}, ${got.y}), aimed at (${aim.x}, ${aim.y})`);
    }
    // The panel's small screen: a third of the page's size, so a few page pixels per screen pixel.
    await clickTarget('screen', 4);

    // Enlarged in a 1440×900 window: the real size, one page pixel per pixel.
    await page.setViewportSize({ width: 1440, height: 900 });
    await tab.getByTestId('enlarge').click();
    const big = page.getByTestId('desktop-enlarged');
    await big.waitFor();
    await page.waitForFunction(() => Number(document.querySelector('[data-testid="enlarged-screen"]')?.dataset.frames) > 0);
    await until('the real size', async () => (await big.getAttribute('data-scale')) === '1.000');
    assert.equal(await big.getByTestId('enlarged-size').textContent(), 'Actual size');
    const canvas = await big.getByTestId('enlarged-screen').locator('canvas').boundingBox();
    const fw = Number(await big.getByTestId('enlarged-screen').getAttribute('data-frame-width'));
    const fh = Number(await big.getByTestId('enlarged-screen').getAttribute('data-frame-height'));
    assert.ok(Math.abs(canvas.width - fw) < 0.5 && Math.abs(canvas.height - fh) < 0.5, `the enlarged picture is ${canvas.width}×${canvas.height}, want the page's ${fw}×${fh}`);
    assert.equal(await page.evaluate(() => document.activeElement?.closest('[data-testid="enlarged-screen"]') !== null), true, 'holding the browser, the keyboard goes to the page');
    await waitForColour(page, 600, 360, BLUE, 'enlarged-screen');
    await clickTarget('enlarged-screen', 1);
    // Escape goes to the page while it has the keyboard: the screen stays enlarged.
    await page.keyboard.press('Escape');
    await page.waitForTimeout(200);
    assert.equal(await big.count(), 1);
    await axeClean(page, 'the enlarged Desktop', '[data-testid="desktop-enlarged"]');

    // A 1024×700 window: scaled down to fit, not cropped.
    await page.setViewportSize({ width: 1024, height: 700 });
    await until('scaled to fit', async () => Number(await big.getAttribute('data-scale')) < 0.99);
    const small = await big.getByTestId('enlarged-screen').locator('canvas').boundingBox();
    assert.ok(small.x >= 0 && small.y >= 0 && small.x + small.width <= 1024 && small.y + small.height <= 700, `the scaled picture ${JSON.stringify(small)} leaves the window`);
    assert.match(await big.getByTestId('enlarged-size').textContent(), /^\d+% to fit$/);
    await clickTarget('enlarged-screen', 2);
    await shoot(page, 'desktop-enlarged-1024');

    // The address bar of the enlarged screen: a second page, back, forward, reload.
    await page.setViewportSize({ width: 1280, height: 860 });
    const bar = big.getByTestId('nav-address');
    const title = () => big.locator('header .title').textContent();
    await bar.click();
    await bar.fill('  ' + `${base}/second` + ' ');
    await bar.press('Enter');
    await until('the second page', async () => (await title()) === 'Second');
    assert.equal(loads['/second'], 1);
    // Back and Forward follow the tab's history: only the one that goes somewhere is enabled.
    const enabled = async (id) => !(await big.getByTestId(id).isDisabled());
    await until('Back enabled, Forward not, at the newest page', async () => (await enabled('nav-back')) && !(await enabled('nav-forward')));
    assert.equal(await big.getByTestId('nav-forward').getAttribute('title'), 'No later page');
    await big.getByTestId('nav-back').click();
    await until('back on the target', async () => (await title()) === 'Target');
    assert.equal(await bar.inputValue(), `${base}/target`);
    await until('Forward enabled after going back', () => enabled('nav-forward'));
    await big.getByTestId('nav-forward').click();
    await until('forward on the second page', async () => (await title()) === 'Second');
    await until('Forward disabled again at the newest page', async () => !(await enabled('nav-forward')));
    const before = loads['/second'];
    await big.getByTestId('nav-reload').click();
    await until('the reload reaches the site', () => loads['/second'] === before + 1);
    await until('the reloaded page', async () => (await title()) === 'Second');

    // What the browser must not open is refused, saying what to type; Escape takes typing back.
    await bar.click();
    await bar.fill('file:///etc/passwd');
    await bar.press('Enter');
    await big.getByTestId('enlarged-error').getByText(/file: addresses do not open in the agent's browser; type a web address/).waitFor();
    await bar.fill('somewhere.example');
    await bar.press('Escape');
    assert.equal(await bar.inputValue(), `${base}/second`);
    assert.equal(await big.count(), 1, 'the first Escape only takes the typing back');
    await shoot(page, 'desktop-enlarged-1280');
    await page.setViewportSize({ width: 1920, height: 1080 });
    await until('the real size at 1920', async () => (await big.getAttribute('data-scale')) === '1.000');
    await shoot(page, 'desktop-enlarged-1920');
    await page.setViewportSize({ width: 1280, height: 860 });

    // Handed back: the address bar only shows; Shrink (or Escape) goes back to the panel, focus to Enlarge.
    await big.getByTestId('hand-back').click();
    await big.getByTestId('take-over').waitFor();
    assert.equal(await big.getByTestId('nav-forward').isDisabled(), true);
    assert.equal(await bar.getAttribute('readonly'), '');
    await big.getByTestId('desktop-shrink').click();
    await big.waitFor({ state: 'detached' });
    assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'enlarge', 'focus goes back to Enlarge');
    await tab.getByTestId('screen').waitFor();

    // F enlarges; Escape shrinks; the panel stays open.
    await page.evaluate(() => /** @type {HTMLElement} */ (document.activeElement)?.blur());
    await page.keyboard.press('f');
    await big.waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'desktop-shrink', 'not holding the browser, focus goes to Shrink');
    await page.keyboard.press('Escape');
    await big.waitFor({ state: 'detached' });
    assert.equal(await page.getByTestId('agent-panel').count(), 1);
    assert.deepEqual(page.errors, []);
  });

  test('popped out: a window of its own shows the screen live; take over there and the click lands', async () => {
    const tab = page.getByTestId('desktop-tab');
    const base = `http://127.0.0.1:${site.address().port}`;
    await tab.getByTestId('enlarge').click();
    const big = page.getByTestId('desktop-enlarged');
    await big.waitFor();

    // Pop out from the enlarged screen: a popup window, the overlay gives way to it.
    const [popup] = await Promise.all([context.waitForEvent('page'), big.getByTestId('desktop-pop-out').click()]);
    popup.errors = [];
    popup.on('pageerror', (err) => popup.errors.push(err));
    await big.waitFor({ state: 'detached' });
    await popup.waitForLoadState();
    assert.equal(new URL(popup.url()).hash, `#desktop=${wsId}/${ada.id}`);
    assert.equal(new URL(popup.url()).search, '', 'no token in the address: the cookie signs the window in');
    assert.equal(await popup.evaluate(() => window.opener !== null), true, 'a popup of the page');
    const win = popup.getByTestId('desktop-enlarged');
    await win.waitFor();
    await until('the window title', async () => (await popup.title()) === 'Ada Lovelace — Desktop — Rerun');
    assert.equal(await popup.locator('[data-testid="box"]').count(), 0, 'no board in the popped-out window');
    assert.equal(await win.getByTestId('desktop-shrink').count(), 0, 'nothing to shrink back to');
    assert.equal(await win.locator('h1').textContent(), 'Ada Lovelace');
    await popup.waitForFunction(() => Number(document.querySelector('[data-testid="enlarged-screen"]')?.dataset.frames) > 0);
    await win.locator('header .title').getByText('Second', { exact: true }).waitFor();

    // Take over in the window: the panel hears it too; browse to the target and press its button.
    await win.getByTestId('take-over').click();
    await win.getByTestId('hand-back').waitFor();
    await tab.getByTestId('desktop-state').getByText('You have the browser').waitFor();
    assert.equal(await popup.evaluate(() => document.activeElement?.closest('[data-testid="enlarged-screen"]') !== null), true, 'the keyboard goes to the page');
    const bar = win.getByTestId('nav-address');
    await bar.click();
    await bar.fill(`${base}/target`);
    await bar.press('Enter');
    await win.locator('header .title').getByText('Target', { exact: true }).waitFor();
    await waitForColour(popup, 600, 360, BLUE, 'enlarged-screen');
    const n = clicks.length;
    const aim = { x: TARGET.left + 100, y: TARGET.top + 60 };
    const at = await onScreen(popup, aim.x, aim.y, 'enlarged-screen');
    await popup.mouse.click(at.x, at.y);
    const got = await until('the click through the popped-out window', () => clicks.length > n && clicks[n]);
    assert.equal(got.on, 'hit', `the click landed on ${got.on} at (${got.x}, ${got.y})`);
    assert.ok(Math.abs(got.x - aim.x) <= 2 && Math.abs(got.y - aim.y) <= 2, `the click landed at (${got.x}, ${got.y}), aimed at (${aim.x}, ${aim.y})`);
    await axeClean(popup, 'the popped-out Desktop');
    await shoot(popup, 'desktop-popped');

    // Hand back there; the panel follows. Closing the window leaves the app as it was.
    await win.getByTestId('hand-back').click();
    await win.getByTestId('take-over').waitFor();
    await tab.getByTestId('take-over').waitFor();
    assert.deepEqual(popup.errors, []);
    await popup.close();
    await tab.getByTestId('screen').waitFor();

    // The tab's own Pop out button opens it again.
    const [again] = await Promise.all([context.waitForEvent('page'), tab.getByTestId('pop-out').click()]);
    await again.getByTestId('desktop-enlarged').waitFor();
    await until('the window title', async () => (await again.title()) === 'Ada Lovelace — Desktop — Rerun');
    await again.close();

    // Only the desktop window asks the system to open it (rerun serve: from the browser).
    await assert.rejects(call('POST', '/api/ui/open-desktop', { workspace: wsId, agent: ada.id }), /409.*from your browser/);
    assert.deepEqual(page.errors, []);
  });

  test("the desktop window's pop-out link signs a fresh browser in and keeps the Desktop's address", async () => {
    // What POST /api/ui/open-desktop hands the system's browser: the login link with the fragment.
    const fresh = await browser.newContext({ viewport: { width: 1304, height: 800 } });
    try {
      const win = await fresh.newPage();
      await win.goto(`${server.url}#desktop=${wsId}/${ada.id}`);
      await win.getByTestId('desktop-enlarged').waitFor();
      await until('the window title', async () => (await win.title()) === 'Ada Lovelace — Desktop — Rerun');
      const u = new URL(win.url());
      assert.equal(u.search, '', 'the token left the address');
      assert.equal(u.hash, `#desktop=${wsId}/${ada.id}`);
      await win.waitForFunction(() => Number(document.querySelector('[data-testid="enlarged-screen"]')?.dataset.frames) > 0);
      // The size Pop out asks of a window (lib/popout POP_CHROME: 24 wide, 73 high around the page) shows it at its real size.
      const shown = win.getByTestId('enlarged-screen');
      const fw = Number(await shown.getAttribute('data-frame-width'));
      const fh = Number(await shown.getAttribute('data-frame-height'));
      await win.setViewportSize({ width: fw + 24, height: fh + 73 });
      await until('the real size in a window of the asked size', async () => (await win.getByTestId('desktop-enlarged').getAttribute('data-scale')) === '1.000');
    } finally {
      await fresh.close();
    }
  });

  test('a popped-out Desktop whose browser is not running offers Start, then shows the screen', async () => {
    const board = await call('GET', `/api/workspaces/${wsId}/board`);
    const cleo = await call('POST', `/api/workspaces/${wsId}/agents`, { name: 'Cleo Idle', box_id: board.boxes[0].id, capabilities: ['browser'] });
    const win = await context.newPage();
    await win.goto(`${server.origin}/#desktop=${wsId}/${cleo.id}`);
    const off = win.getByTestId('desktop-off');
    await off.getByText('Browser not started').waitFor();
    assert.equal(await win.title(), 'Cleo Idle — Desktop — Rerun');
    assert.equal(await off.locator('h1').textContent(), "Cleo Idle's Desktop");
    await axeClean(win, 'the popped-out Desktop, not started');
    await shoot(win, 'desktop-popped-off');
    await off.getByTestId('browser-start').click();
    await win.getByTestId('desktop-enlarged').waitFor();
    await win.waitForFunction(() => Number(document.querySelector('[data-testid="enlarged-screen"]')?.dataset.frames) > 0);
    await win.getByTestId('take-over').waitFor();
    await win.close();
  });

  test('a popped-out Desktop of a coworker or workspace that is not there says so', async () => {
    const gone = await context.newPage();
    await gone.goto(`${server.origin}/#desktop=${wsId}/nobody`);
    await gone.getByTestId('desktop-window-missing').getByText('This coworker is not here').waitFor();
    assert.equal(await gone.title(), 'This coworker is not here — Rerun');
    await axeClean(gone, 'the missing coworker');
    await shoot(gone, 'desktop-popped-missing');
    await gone.goto(`${server.origin}/#desktop=elsewhere/${ada.id}`);
    await gone.reload(); // a new fragment alone does not load the page again
    await gone.getByTestId('desktop-window-missing').getByText('This workspace is not here').waitFor();
    await gone.close();
  });
});
