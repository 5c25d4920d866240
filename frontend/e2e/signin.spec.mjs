// Opening the server without the token of its link: a signed-out screen, no
// board and no event stream retrying forever; the link itself then works.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { launchBrowser, shotPath, startServer } from './harness.mjs';

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

test('without the token: the signed-out screen, light and dark, and the stream stops', async () => {
  for (const colorScheme of ['light', 'dark']) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme });
    const page = await context.newPage();
    const streams = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/api/events') streams.push(r.url());
    });
    const errors = [];
    page.on('pageerror', (e) => errors.push(e));

    await page.goto(server.origin + '/');
    const screen = page.getByTestId('signed-out');
    await screen.getByRole('heading', { name: 'Open Rerun from its link' }).waitFor();
    assert.match(await screen.textContent(), /link Rerun printed when it started/);
    assert.match(await screen.textContent(), /Restarting rerun serve prints a new one/);
    assert.equal(await page.getByTestId('add-agent').count(), 0);
    assert.equal(await page.getByTestId('workspace-pill').count(), 0);
    assert.equal(await page.getByTestId('live').count(), 0);
    await page.waitForTimeout(300); // fonts and the card settle
    await page.screenshot({ path: shotPath(`signed-out-${colorScheme}.png`) });

    // A refused stream would be retried after 1 s, then 2 s, …: at most the first
    // try (the 401 may even stop it before it goes out), none after.
    await page.waitForTimeout(2500);
    assert.ok(streams.length <= 1, `event stream opened ${streams.length} times while signed out`);
    assert.deepEqual(errors, []);
    await context.close();
  }
});

test('then opening the link shows the board', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.goto(server.origin + '/');
  await page.getByTestId('signed-out').waitFor();
  await page.goto(server.url);
  await page.locator('[data-testid="box"]').first().waitFor();
  await page.getByTestId('add-agent').waitFor();
  await page.getByTestId('live').getByText('Live').waitFor();
  assert.equal(await page.getByTestId('signed-out').count(), 0);
  await context.close();
});

test('Try again picks up the link opened in another tab', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.goto(server.origin + '/');
  await page.getByTestId('signed-out').waitFor();

  const other = await context.newPage();
  await other.goto(server.url);
  await other.locator('[data-testid="box"]').first().waitFor();
  await other.close();

  await page.getByRole('button', { name: 'Try again' }).click();
  await page.locator('[data-testid="box"]').first().waitFor();
  assert.equal(await page.getByTestId('signed-out').count(), 0);
  await context.close();
});
