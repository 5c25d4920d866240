// The phone, end to end, in a phone-sized Chromium: a real rerun-relay
// beside `rerun serve`, a Web Push service written here that checks the
// relay's VAPID signature and decrypts each message (RFC 8291) with the
// subscription's own keys, and the relay's phone page. The desktop pairs
// the phone (Settings → Notifications → Phone), an approval card of a chat
// run is pushed, the phone opens it from its notification, approves one
// item and declines the other, and the desktop's run resumes with exactly
// those decisions. Neither the push nor the relay's database carries the
// card in the clear.
//
// Chromium sends its push subscriptions to Google's push service, which
// cannot be reached here, so the page's PushManager.subscribe answers with
// a subscription to the service below; and a pushed message reaches the
// service worker's own `receive`, the function its push event calls.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createECDH, createPublicKey, hkdfSync, randomBytes, createDecipheriv, verify } from 'node:crypto';
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agent, apiClient, launchBrowser, openApp, relayBinary, shotPath, startFakeLLM, startRelay, startServer, until } from './harness.mjs';

const b64u = (b) => Buffer.from(b).toString('base64url');

/**
 * A Web Push service on 127.0.0.1 with one subscription: it takes what a
 * push service takes (RFC 8030: TTL, a VAPID JWT of RFC 8292 signed by the
 * key it names) and decrypts the aes128gcm body (RFC 8291, RFC 8188) as the
 * phone's browser would. messages holds { plain, claims, key } or { error }.
 */
async function startPushService() {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  const auth = randomBytes(16);
  const messages = [];
  const waiters = [];
  const srv = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let m;
      try {
        m = open(req, Buffer.concat(chunks));
        res.writeHead(201).end();
      } catch (e) {
        m = { error: e.message };
        res.writeHead(400).end(e.message);
      }
      messages.push(m);
      waiters.splice(0).forEach((w) => w());
    });
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${srv.address().port}`;

  function open(req, body) {
    if (!req.headers.ttl) throw new Error('no TTL header');
    if (req.headers['content-encoding'] !== 'aes128gcm') throw new Error(`content-encoding ${req.headers['content-encoding']}`);
    const m = /^vapid t=([^,]+),\s*k=(\S+)$/.exec(req.headers.authorization ?? '');
    if (!m) throw new Error(`authorization ${req.headers.authorization}`);
    const [h, p, s] = m[1].split('.');
    const claims = JSON.parse(Buffer.from(p, 'base64url'));
    const point = Buffer.from(m[2], 'base64url');
    const key = createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: b64u(point.subarray(1, 33)), y: b64u(point.subarray(33)) }, format: 'jwk' });
    if (!verify('sha256', Buffer.from(`${h}.${p}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(s, 'base64url'))) {
      throw new Error('the VAPID signature does not verify');
    }
    if (claims.aud !== origin || !(claims.exp * 1000 > Date.now())) throw new Error(`claims ${JSON.stringify(claims)}`);

    const salt = body.subarray(0, 16);
    const idlen = body[20];
    const asPublic = body.subarray(21, 21 + idlen);
    const shared = ecdh.computeSecret(asPublic);
    const info = Buffer.concat([Buffer.from('WebPush: info\0'), ecdh.getPublicKey(), asPublic]);
    const ikm = Buffer.from(hkdfSync('sha256', shared, auth, info, 32));
    const cek = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
    const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));
    const record = body.subarray(21 + idlen);
    const d = createDecipheriv('aes-128-gcm', cek, nonce);
    d.setAuthTag(record.subarray(record.length - 16));
    let plain = Buffer.concat([d.update(record.subarray(0, record.length - 16)), d.final()]);
    let end = plain.length - 1;
    while (end >= 0 && plain[end] === 0) end--;
    if (plain[end] !== 2) throw new Error('the last record has no 0x02 delimiter');
    plain = plain.subarray(0, end);
    return { plain, claims, key: m[2] };
  }

  return {
    origin,
    messages,
    subscription: { endpoint: `${origin}/push/pixel`, expirationTime: null, keys: { p256dh: b64u(ecdh.getPublicKey()), auth: b64u(auth) } },
    /** Resolves with message n (0-based) once it arrived. */
    async message(n) {
      while (messages.length <= n) await new Promise((r) => waiters.push(r));
      return messages[n];
    },
    stop: () => new Promise((r) => srv.close(r)),
  };
}

let dir;
let relay;
let push;
let llm;
let server;
let browser;
let desktop;
let phone;
let call;
let wsId;

before(async () => {
  process.env.RERUN_KEYCHAIN = 'off';
  dir = mkdtempSync(join(tmpdir(), 'rerun-e2e-phone-'));
  push = await startPushService();
  relay = await startRelay(join(dir, 'relay.db'), { args: ['-push-hosts', '127.0.0.1'] });
  llm = await startFakeLLM();
  server = await startServer({ llm });
  browser = await launchBrowser();
  desktop = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  phone = await browser.newContext({
    viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true,
    userAgent: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36',
  });
  await phone.grantPermissions(['notifications'], { origin: relay.url });
  await phone.addInitScript((sub) => {
    if (!self.PushManager) return;
    PushManager.prototype.getSubscription = async () => null;
    PushManager.prototype.subscribe = async () => ({ ...sub, toJSON: () => sub, unsubscribe: async () => true });
  }, push.subscription);
  call = apiClient(server);
  wsId = (await call('GET', '/api/workspaces')).current;
});
after(async () => {
  await phone?.close();
  await desktop?.close();
  await browser?.close();
  await server?.stop();
  await llm?.stop();
  await relay?.stop();
  await push?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('phone', () => {
  let page;
  let phonePage;
  let ada;
  let card;

  test('the desktop links the relay and pairs the phone by its link; approvals go to the phone', async () => {
    const printed = execFileSync(relayBinary(), ['-db', join(dir, 'relay.db'), '-new-workspace']).toString();
    const [, relayWs, secret] = /workspace (\S+)\nsecret (\S+)/.exec(printed);
    await call('POST', `/api/workspaces/${wsId}/relay`, { relay_url: relay.url, workspace_id: relayWs, secret });
    const board = await call('GET', `/api/workspaces/${wsId}/board`);
    ada = await call('POST', `/api/workspaces/${wsId}/agents`, { name: 'Ada Lovelace', box_id: board.boxes[0].id, capabilities: ['human'] });

    page = await openApp(desktop, server);
    await page.getByTestId('open-settings').click();
    await page.getByRole('menuitem', { name: /Notifications/ }).click();
    const dlg = page.getByTestId('notification-settings-dialog');
    await dlg.getByTestId('phone-none').waitFor();
    await dlg.getByTestId('phone-pair').click();
    const link = await dlg.getByTestId('phone-link').inputValue();
    assert.match(link, new RegExp(`^${relay.url}/p/#pair=`), 'the link opens the relay’s phone page, its secrets in the fragment');

    phonePage = await phone.newPage();
    phonePage.errors = [];
    phonePage.on('pageerror', (e) => phonePage.errors.push(e));
    await phonePage.goto(link);
    await phonePage.getByRole('heading', { name: /Pair with/ }).waitFor();
    await phonePage.getByRole('textbox', { name: 'This phone\'s name' }).fill('Pixel');
    await phonePage.screenshot({ path: shotPath('phone-pair.png') });
    await phonePage.getByRole('button', { name: 'Pair this phone' }).click();
    await phonePage.getByText('Nothing waits for you.').waitFor();
    assert.doesNotMatch(phonePage.url(), /#pair=/, 'the pairing fragment leaves the address once used');

    // The desktop lists the phone (Pair a phone's list reloads on the
    // relay's status), and approval cards of my runs go to it.
    await until('the desktop lists the paired phone', async () => {
      const phones = await call('GET', `/api/workspaces/${wsId}/phone/devices`);
      return phones.length === 1 && phones[0].name === 'Pixel';
    });
    const box = dlg.getByTestId('delivery-approval-mine-phone');
    if (!(await box.isChecked())) await box.check();
    await dlg.getByTestId('delivery-save').click();
    await until('the delivery setting is saved', async () => (await call('GET', `/api/workspaces/${wsId}/settings/notifications`)).approval.mine.phone === true);
    await page.keyboard.press('Escape');
  });

  test('an approval card is pushed, sealed; the notification opens the card on the phone', async () => {
    await agent(page, ada.handle).click();
    const input = page.getByTestId('chat-input');
    await input.fill('use tool request_approval ' + JSON.stringify({
      title: 'Release 2.4',
      items: [
        { title: 'Deploy to prod', kind: 'command', detail: 'deploy --env prod' },
        { title: 'Email the customers', detail: 'to: everyone@example.com' },
      ],
    }));
    await input.press('Enter');
    await page.locator('[data-testid="pause-card"][data-kind="approval"]').waitFor();

    const m = await push.message(0);
    assert.equal(m.error, undefined, `the push service refused the push: ${m.error}`);
    assert.equal(m.key, (await (await fetch(`${relay.url}/v1/phone/vapid`)).json()).public_key, 'signed with the relay’s announced key');
    for (const plain of ['Deploy to prod', 'Email the customers', 'Release 2.4', 'Ada']) {
      assert.equal(m.plain.includes(plain), false, `the push carries “${plain}” in the clear`);
    }

    // What the push event does: the service worker opens, keeps and shows it.
    const sw = phone.serviceWorkers()[0] ?? (await phone.waitForEvent('serviceworker'));
    const shown = await sw.evaluate(async (bytes) => {
      await receive(new Uint8Array(bytes).buffer);
      return (await self.registration.getNotifications()).map((n) => ({ title: n.title, id: n.data && n.data.id }));
    }, [...m.plain]);
    assert.equal(shown.length, 1, `notifications shown: ${JSON.stringify(shown)}`);
    assert.equal(shown[0].title, 'Ada Lovelace: Needs your approval for 2 actions');
    card = shown[0].id;

    // A tap on the notification opens ./#card=<id>.
    await phonePage.goto(`${relay.url}/p/#card=${encodeURIComponent(card)}`);
    const article = phonePage.locator(`[data-card="${card}"]`);
    await article.getByText('Deploy to prod').waitFor();
    await article.getByText('deploy --env prod').waitFor();
    await phonePage.screenshot({ path: shotPath('phone-card.png'), fullPage: true });
  });

  test('approve one, decline the other: the desktop’s run resumes with those decisions', async () => {
    const article = phonePage.locator(`[data-card="${card}"]`);
    await article.getByRole('button', { name: 'Send decisions' }).click();
    await article.getByText('Approve or decline each item first.').waitFor();
    const items = article.locator('[data-item]');
    await items.nth(0).getByRole('button', { name: 'Approve' }).tap();
    await items.nth(1).getByRole('button', { name: 'Decline' }).tap();
    await article.getByText('Approve or decline each item first.').waitFor({ state: 'detached' });
    for (const scheme of ['light', 'dark']) {
      await phonePage.emulateMedia({ colorScheme: scheme });
      await phonePage.screenshot({ path: shotPath(`phone-decisions-${scheme}.png`), fullPage: true });
    }
    await phonePage.emulateMedia({ colorScheme: 'light' });
    await article.getByRole('button', { name: 'Send decisions' }).tap();
    await phonePage.getByText('Answer sent').waitFor();
    await phonePage.screenshot({ path: shotPath('phone-sent.png'), fullPage: true });

    await page.locator('[data-testid="pause-card"][data-kind="approval"]').waitFor({ state: 'detached' });
    await page.getByTestId('chat-status').waitFor({ state: 'detached' });
    const notes = await call('GET', `/api/workspaces/${wsId}/notifications?agent_id=${ada.id}`);
    const approval = notes.find((n) => n.kind === 'approval');
    assert.ok(approval?.handled_at, 'the card’s notification is handled on the desktop too');
    const answer = await until('the card has its answer', async () => {
      const p = await call('GET', `/api/workspaces/${wsId}/pauses/${approval.pause_id}`).catch(() => null);
      return p && p.status === 'answered' ? p : null;
    });
    const decisions = (typeof answer.answer === 'string' ? JSON.parse(answer.answer) : answer.answer).decisions;
    assert.deepEqual(decisions.map((d) => d.approved), [true, false], `decisions ${JSON.stringify(decisions)}`);
    assert.deepEqual(phonePage.errors, [], 'the phone page threw');

    // The relay kept the card and the answer only sealed.
    for (const f of ['relay.db', 'relay.db-wal']) {
      let raw;
      try { raw = readFileSync(join(dir, f)); } catch { continue; }
      for (const plain of ['Deploy to prod', 'Email the customers', 'Release 2.4']) {
        assert.equal(raw.includes(plain), false, `${f} holds “${plain}” in the clear`);
      }
    }
  });
});
