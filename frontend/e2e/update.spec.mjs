// Rerun finds a new version by itself: a server that trusts the test-only
// release key (rerunTestKeyBinary, version v1.4.2) reads a feed signed
// here, served by a local http server, shortly after it starts. The top
// bar says so; its pill opens About Rerun with the notes, where Download
// and verify checks the package; Settings → General's "Only when I ask" is
// saved, and the next start shows what was found without asking the feed.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createPrivateKey, sign } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { axeClean, launchBrowser, openApp, rerunTestKeyBinary, shotPath, startServer, TEST_UPDATE_KEY } from './harness.mjs';

/** The test key as Node reads it: the 32-byte seed behind the PKCS#8 prefix of an ed25519 key. */
const seed = Buffer.from(readFileSync(TEST_UPDATE_KEY, 'utf8').trim(), 'base64');
const key = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]), format: 'der', type: 'pkcs8' });
const signed = (bytes) => sign(null, bytes, key).toString('base64') + '\n';

const pkg = Buffer.from('the v1.5.0 package '.repeat(500));
const digest = createHash('sha256').update(pkg).digest();
const NOTES = 'Updates find you: Rerun checks once a day.';

let feeds;
let feedRequests = 0;
let server;
let browser;

before(async () => {
  let feed;
  feeds = createServer((req, res) => {
    const send = (body) => res.writeHead(200, { 'Content-Type': 'application/octet-stream' }).end(body);
    switch (req.url) {
      case '/feed.json':
        feedRequests++;
        return send(feed);
      case '/feed.json.sig':
        return send(signed(feed));
      case '/rerun_1.5.0_amd64.deb':
        return send(pkg);
      case '/rerun_1.5.0_amd64.deb.sig':
        return send(signed(digest));
      default:
        res.writeHead(404).end();
    }
  });
  await new Promise((r) => feeds.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${feeds.address().port}`;
  feed = Buffer.from(JSON.stringify({ version: 'v1.5.0', url: `${base}/rerun_1.5.0_amd64.deb`, sha256: digest.toString('hex'), notes: NOTES }));
  process.env.RERUN_UPDATE_FEED = `${base}/feed.json`;
  server = await startServer({ bin: rerunTestKeyBinary() });
  browser = await launchBrowser();
});
after(async () => {
  process.env.RERUN_UPDATE_FEED = 'off';
  await browser?.close();
  await server?.stop();
  if (server) rmSync(server.dataDir, { recursive: true, force: true }); // the restart kept it
  await new Promise((r) => feeds?.close(r));
});

test('the top bar says a newer Rerun is out; About shows its notes and verifies it; Only when I ask is kept', async () => {
  const context = await browser.newContext({ bypassCSP: true });
  const page = await openApp(context, server);
  const pill = page.getByRole('button', { name: 'Rerun v1.5.0 is available' });
  await pill.waitFor();
  assert.equal(feedRequests, 1, 'one automatic check');
  // The default window (1280 wide) says it short and keeps the gear in view; a wide one says it whole.
  for (const [width, text] of [
    [1280, 'v1.5.0 available'],
    [1600, 'Rerun v1.5.0 is available'],
  ]) {
    await page.setViewportSize({ width, height: 720 });
    await page.getByTestId('update-pill').getByText(text, { exact: true }).waitFor();
    const gear = await page.getByTestId('open-settings').boundingBox();
    assert.ok(gear && gear.x + gear.width <= width, `the gear is out of view at ${width}px: ${JSON.stringify(gear)}`);
    for (const scheme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.waitForFunction((s) => document.documentElement.dataset.theme === s, scheme);
      await page.locator('header.topbar').screenshot({ path: shotPath(`update-pill-${width}-${scheme}.png`) });
    }
  }
  await axeClean(page, 'the update pill', '[data-testid="update-pill"]');

  await pill.click();
  const about = page.getByTestId('about-dialog');
  await about.getByText('Rerun v1.5.0 is available (you have v1.4.2).').waitFor();
  await about.getByText(NOTES).waitFor();
  assert.match(await about.getByTestId('about-last-check').textContent(), /^Checked moments ago\. Rerun checks once a day\.$/);
  await about.getByTestId('about-download-verify').click();
  await about.getByTestId('about-downloaded').filter({ hasText: 'rerun_1.5.0_amd64.deb' }).waitFor();
  assert.match(await about.getByTestId('about-downloaded').textContent(), /its signature checks out/);
  await page.screenshot({ path: shotPath('update-about.png') });
  await about.getByText('Close', { exact: true }).click();
  await about.waitFor({ state: 'detached' });

  await page.getByTestId('open-settings').click();
  await page.getByRole('menuitem', { name: /^General/ }).click();
  const general = page.getByTestId('general-settings-dialog');
  const checks = general.getByTestId('update-checks');
  assert.equal(await checks.getByRole('radio', { name: /Check daily/ }).isChecked(), true);
  await checks.getByRole('radio', { name: /Only when I ask/ }).check();
  await page.waitForFunction(async () => (await (await fetch('/api/preferences')).json()).update_checks === 'manual');
  await general.screenshot({ path: shotPath('update-general.png') });
  await general.getByRole('button', { name: 'Close' }).click();
  await general.waitFor({ state: 'detached' });
  assert.deepEqual(page.errors, []);
  await context.close();

  // The next start remembers the release it found and asks the feed nothing
  // (Download and verify read it once more: the server trusts no status from the page).
  const asked = feedRequests;
  await server.stop({ keepData: true });
  server = await startServer({ bin: rerunTestKeyBinary(), dataDir: server.dataDir });
  const again = await openApp(await browser.newContext(), server);
  await again.getByRole('button', { name: 'Rerun v1.5.0 is available' }).waitFor();
  const last = await again.evaluate(async () => (await fetch('/api/update/last')).json());
  assert.equal(last.checks, 'manual');
  assert.equal(feedRequests, asked, 'no check after the restart');
  await again.getByTestId('update-pill').click();
  assert.match(await again.getByTestId('about-last-check').textContent(), /Rerun checks only when you ask\.$/);
  assert.deepEqual(again.errors, []);
});
