// Apps from the MCP Registry against a real `rerun serve` and a fake registry
// run by this test (the read API of registry.modelcontextprotocol.io, paged by
// cursor, like backend/connector/registrytest): registry servers listed after
// Rerun's own apps, marked as not reviewed by Rerun, a duplicate of a built-in
// app hidden and one that cannot run here not installable; a registry server
// installed from the catalog (mcp-hello-world, a small real npm package run by
// npx, so this test needs the npm registry) whose card shows its drafted skill
// and its tools; the registry down, its cached results shown with their age
// beside the built-ins; Settings → General turning the registry off, refusing
// an http URL and taking a custom one.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { agent, apiClient, axeClean, launchBrowser, openApp, openTab, shoot, startServer, until } from './harness.mjs';

/** A small real MCP server on npm (tools echo, add, debug) that no built-in app installs. */
const HELLO = { name: 'io.github.lobehub/mcp-hello-world', pkg: 'mcp-hello-world', version: '1.1.2' };
const ICON = `data:image/svg+xml;base64,${Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><circle cx="12" cy="12" r="11" fill="#0ea5e9"/><path d="M8 7v10M16 7v10M8 12h8" stroke="#fff" stroke-width="2.4" stroke-linecap="round"/></svg>',
).toString('base64')}`;

const npm = (name, description, pkg, version, extra = {}) => ({
  name,
  description,
  version,
  packages: [{ registryType: 'npm', identifier: pkg, version, transport: { type: 'stdio' } }],
  ...extra,
});

/** What the fake registry lists, in order. */
function registryServers() {
  return [
    npm(HELLO.name, 'A simple Hello World MCP server: echo a message, add two numbers, print debug information.', HELLO.pkg, HELLO.version, {
      title: 'Hello World',
      icons: [{ src: ICON, mimeType: 'image/svg+xml' }],
      repository: { url: 'https://github.com/lobehub/mcp-hello-world', source: 'github' },
    }),
    // The built-in Everything app runs this package: the catalog shows the curated entry only.
    npm('io.github.modelcontextprotocol/server-everything', 'Every feature of MCP, for testing clients.', '@modelcontextprotocol/server-everything', '2026.8.31'),
    {
      name: 'io.example/everything-container',
      title: 'Everything in a container',
      description: 'The everything test server, shipped as a Docker image only.',
      version: '0.3.0',
      packages: [{ registryType: 'oci', identifier: 'docker.io/example/everything', version: '0.3.0', transport: { type: 'stdio' } }],
    },
    {
      name: 'io.example/weather',
      title: 'Weather',
      description: 'Forecasts and alerts for any city, from a hosted MCP endpoint.',
      version: '2.1.0',
      // An icon that never loads: the tile falls back to the letter.
      icons: [{ src: 'https://127.0.0.1:9/weather.png', mimeType: 'image/png' }],
      remotes: [{ type: 'streamable-http', url: 'https://weather.example.com/mcp', headers: [{ name: 'Authorization', value: 'Bearer {token}', isSecret: true, isRequired: true, description: 'Your Weather API token.' }] }],
    },
    // Enough to fill more than one page: the catalog follows the cursor.
    ...Array.from({ length: 35 }, (_, i) =>
      npm(`io.example/filler-${String(i).padStart(2, '0')}`, `Filler server number ${i}.`, `filler-mcp-${i}`, '1.0.0'),
    ),
  ];
}

/**
 * The fake registry: GET /v0.1/servers?search=&cursor=&limit= (servers whose
 * name holds search, after the cursor, the name that ended the page before)
 * and GET /v0.1/servers/{name}/versions/latest. down answers 503 to all.
 */
async function startRegistry(servers) {
  const state = { down: false, lists: 0, withCursor: 0 };
  const entry = (s) => ({ server: s, _meta: { 'io.modelcontextprotocol.registry/official': { status: 'active', isLatest: true } } });
  const json = (res, code, body) => {
    res.writeHead(code, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const http = createServer((req, res) => {
    if (state.down) {
      res.writeHead(503, { 'Content-Type': 'text/plain' });
      res.end('down for maintenance');
      return;
    }
    const u = new URL(req.url, 'http://registry');
    const detail = /^\/v0\.1\/servers\/(.+)\/versions\/latest$/.exec(u.pathname);
    if (req.method !== 'GET') return json(res, 405, { detail: 'method not allowed' });
    if (u.pathname === '/v0.1/servers') {
      state.lists++;
      const limit = Number(u.searchParams.get('limit') ?? 30);
      if (!Number.isInteger(limit) || limit < 1 || limit > 100) return json(res, 422, { detail: 'limit must be 1 to 100' });
      const search = (u.searchParams.get('search') ?? '').toLowerCase();
      const cursor = u.searchParams.get('cursor') ?? '';
      if (cursor) state.withCursor++;
      const after = cursor ? servers.findIndex((s) => s.name === cursor) + 1 : 0;
      const found = servers.slice(after).filter((s) => !search || s.name.toLowerCase().includes(search));
      const page = found.slice(0, limit);
      const metadata = { count: page.length };
      if (found.length > limit) metadata.nextCursor = page[page.length - 1].name;
      return json(res, 200, { servers: page.map(entry), metadata });
    }
    if (detail) {
      const s = servers.find((x) => x.name === decodeURIComponent(detail[1]));
      return s ? json(res, 200, entry(s)) : json(res, 404, { title: 'Not Found', status: 404, detail: 'Server not found' });
    }
    json(res, 404, { detail: 'no such route' });
  });
  await new Promise((r) => http.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${http.address().port}`, state, stop: () => new Promise((r) => http.close(r)) };
}

let registry;
let server;
let browser;
let context;
let call;
let wsId;

before(async () => {
  registry = await startRegistry(registryServers());
  server = await startServer({ registry: registry.url });
  browser = await launchBrowser();
  // bypassCSP: axe is injected as an inline script.
  context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
  call = apiClient(server);
  wsId = (await call('GET', '/api/workspaces')).current;
});
after(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
  await registry?.stop();
});

describe('apps from the MCP Registry', () => {
  let page;
  let ada;
  let tab;
  let dlg;
  const entry = (id) => dlg.locator(`[data-testid="catalog-app"][data-id="${id}"]`);
  /** Types a search and waits for its answer (the results say which search they answer). */
  const search = async (q) => {
    await dlg.getByTestId('catalog-search').fill(q);
    await dlg.locator(`[data-testid="catalog-body"][data-query="${q}"]`).waitFor();
  };
  const openCatalog = async () => {
    await tab.getByTestId('add-app').click();
    dlg = page.getByTestId('app-catalog-dialog');
    await dlg.waitFor();
  };
  const closeCatalog = async () => {
    await page.keyboard.press('Escape');
    await dlg.waitFor({ state: 'detached' });
  };

  test('registry servers come after the built-ins, marked not reviewed; a duplicate of a built-in is hidden; one that cannot run here cannot install', async () => {
    const board = await call('GET', `/api/workspaces/${wsId}/board`);
    ada = await call('POST', `/api/workspaces/${wsId}/agents`, { name: 'Ada Lovelace', box_id: board.boxes[0].id });
    page = await openApp(context, server);
    await agent(page, ada.handle).click();
    await openTab(page, 'Apps');
    tab = page.getByTestId('apps-tab');
    await tab.getByTestId('apps-empty').waitFor();
    await openCatalog();

    await search('everything');
    const container = entry('io.example/everything-container');
    await container.waitFor();
    const builtin = dlg.getByTestId('catalog-results').locator('[data-testid="catalog-app"][data-id="everything"]');
    await builtin.waitFor();
    assert.equal(await builtin.getAttribute('data-source'), 'builtin');
    assert.equal(await builtin.getByTestId('not-reviewed').count(), 0, 'a built-in app carries no registry badge');
    // The built-ins first, the registry's section after them.
    const order = await page.evaluate(() => {
      const b = document.querySelector('[data-testid="catalog-results"]');
      const r = document.querySelector('[data-testid="catalog-registry"]');
      return b && r ? b.compareDocumentPosition(r) & Node.DOCUMENT_POSITION_FOLLOWING : 0;
    });
    assert.ok(order, 'the registry section follows the built-in results');
    assert.equal(await entry('io.github.modelcontextprotocol/server-everything').count(), 0, 'the registry copy of the built-in Everything is hidden');
    const badge = container.getByTestId('not-reviewed');
    assert.equal((await badge.textContent()).trim(), 'Not reviewed by Rerun');
    assert.match(await badge.getAttribute('title'), /review/);
    assert.match(await badge.getAttribute('title'), /pinned/);
    assert.equal((await container.getByTestId('catalog-version').textContent()).trim(), 'v0.3.0');
    assert.ok(await container.getByTestId('catalog-install').isDisabled(), 'a Docker-only server cannot install here');
    assert.match(await container.getByTestId('catalog-cannot').textContent(), /Docker/);

    // More than one page of the registry: the catalog followed its cursor.
    await search('filler');
    await until('35 filler servers', async () => (await dlg.locator('[data-testid="catalog-app"][data-source="registry"]').count()) === 35);
    assert.ok(registry.state.withCursor > 0, 'a next page was asked for');
    assert.match(await dlg.getByTestId('catalog-empty').textContent(), /MCP Registry has some/);

    // A remote one asking for a secret header: its field, and how it runs.
    await search('weather');
    const weather = entry('io.example/weather');
    await weather.waitFor();
    assert.equal((await weather.getByTestId('catalog-runtime').textContent()).trim(), 'Remote server (HTTP)');
    assert.match(await weather.getByTestId('catalog-needs').textContent(), /secret/);
    await weather.locator('[data-testid="app-icon"][data-kind="letter"]').waitFor();

    await search('');
    assert.ok((await dlg.getByTestId('catalog-results').locator('[data-testid="catalog-app"]').count()) >= 30, 'every built-in app is listed');
    await entry(HELLO.name).scrollIntoViewIfNeeded();
    await shoot(page, 'registry-catalog');
    await axeClean(page, 'the catalog with the registry section', '[data-testid="app-catalog-dialog"]');
    await closeCatalog();
  });

  test('a registry server installs from the catalog: its card is marked, shows the drafted skill, connects and lists its tools', async () => {
    await openCatalog();
    await search('hello');
    const hello = entry(HELLO.name);
    await hello.waitFor();
    const icon = hello.getByTestId('app-icon');
    assert.equal(await icon.getAttribute('data-kind'), 'image');
    assert.equal(await icon.locator('img').getAttribute('referrerpolicy'), 'no-referrer');
    assert.equal((await hello.getByTestId('catalog-version').textContent()).trim(), `v${HELLO.version}`);
    assert.equal((await hello.getByTestId('catalog-runtime').textContent()).trim(), 'npm package (Node.js)');
    // The skill it will get, before installing.
    await hello.getByTestId('catalog-skill').locator('summary').click();
    assert.match(await hello.getByTestId('catalog-skill-text').textContent(), /not reviewed by Rerun/);
    await hello.getByTestId('catalog-install').click();
    await dlg.waitFor({ state: 'detached' });

    const card = tab.locator('[data-testid="app"][data-source="registry"]');
    await card.waitFor();
    assert.equal((await card.getByTestId('app-name').textContent()).trim(), 'Hello World');
    await card.getByTestId('not-reviewed').waitFor();
    // Just installed: the drafted skill shows open.
    const skill = card.getByTestId('app-skill-text');
    await skill.waitFor();
    assert.match(await skill.textContent(), /Rerun did not review this server/);

    // npx fetches the package the first time: as long as that takes.
    await tab.locator(`[data-testid="app"][data-source="registry"][data-status="connected"]`).waitFor();
    const [installed] = await call('GET', `/api/workspaces/${wsId}/agents/${ada.id}/apps`);
    assert.equal(installed.catalog_id, HELLO.name);
    assert.equal(installed.source, 'registry');
    const names = installed.tools.map((t) => t.name).sort();
    assert.deepEqual(names, ['add', 'debug', 'echo']);
    await card.getByTestId('app-tools-toggle').click();
    const tools = card.getByTestId('app-tool');
    await until('three tools listed', async () => (await tools.count()) === 3);
    const echo = installed.tools.find((t) => t.name === 'echo').agent_name;
    assert.ok((await card.getByTestId('app-tools').textContent()).includes(echo));
    // The skill now names the tools it pinned.
    await until('the skill to list the tools', async () => (await skill.textContent()).includes(echo));

    await openCatalog();
    await search('hello');
    await entry(HELLO.name).getByTestId('catalog-installed').waitFor();
    await closeCatalog();
    await shoot(page, 'registry-installed');
    await axeClean(page, 'the Apps tab with a registry app', '[data-testid="agent-panel"]');
    assert.deepEqual(page.errors, []);
  });

  test('the registry down: the catalog says so and shows its cached results with their age, beside the built-ins', async () => {
    registry.state.down = true;
    try {
      await openCatalog();
      await search('hello');
      const offline = dlg.getByTestId('catalog-registry-offline');
      await offline.waitFor();
      assert.match(await offline.textContent(), /Registry unreachable — showing results cached (moments|\d+ minutes?) ago/);
      await entry(HELLO.name).waitFor();
      await shoot(page, 'registry-offline');
      await search('github');
      await dlg.getByTestId('catalog-results').locator('[data-testid="catalog-app"][data-id="github"]').waitFor();
      await dlg.getByTestId('catalog-registry-offline').waitFor();
      await closeCatalog();
    } finally {
      registry.state.down = false;
    }
  });

  test('Settings → General: the registry off, an http URL refused, a custom URL taken, back to the default', async () => {
    const openGeneral = async () => {
      await page.getByTestId('open-settings').click();
      await page.getByRole('menuitem', { name: /^General/ }).click();
      const g = page.getByTestId('general-settings-dialog');
      await g.waitFor();
      return g;
    };
    let general = await openGeneral();
    const setting = general.getByTestId('mcp-registry');
    const host = new URL(registry.url).host;
    assert.equal((await setting.getByTestId('mcp-registry-now').textContent()).trim(), `Searching ${host}.`);
    const choice = (v) => setting.locator(`input[name="mcp-registry"][value="${v}"]`);
    assert.ok(await choice('default').isChecked());

    await choice('off').check();
    await until('the registry off', async () => (await call('GET', '/api/preferences')).mcp_registry === 'off');
    await setting.getByTestId('mcp-registry-now').filter({ hasText: 'off on this computer' }).waitFor();
    await page.keyboard.press('Escape');
    await general.waitFor({ state: 'detached' });
    await openCatalog();
    await dlg.getByTestId('catalog-registry-off').waitFor();
    assert.equal(await dlg.getByTestId('catalog-registry').count(), 0);
    await closeCatalog();

    general = await openGeneral();
    await choice('custom').check();
    const url = setting.getByTestId('mcp-registry-url');
    await url.fill('http://registry.example.com');
    await setting.getByTestId('mcp-registry-save').click();
    await setting.getByTestId('mcp-registry-error').filter({ hasText: 'https://' }).waitFor();
    assert.equal((await call('GET', '/api/preferences')).mcp_registry, 'off', 'nothing saved');
    assert.equal(await url.getAttribute('aria-invalid'), 'true');
    await shoot(page, 'registry-settings-error');
    await axeClean(page, 'Settings → General with a refused registry URL', '[data-testid="general-settings-dialog"]');

    await url.fill(`${registry.url}/`);
    await url.press('Enter');
    await until('the custom registry saved', async () => (await call('GET', '/api/preferences')).mcp_registry === `${registry.url}/`);
    await setting.getByTestId('mcp-registry-now').filter({ hasText: `Searching ${host}.` }).waitFor();
    assert.equal(await setting.getByTestId('mcp-registry-error').count(), 0);
    await shoot(page, 'registry-settings-custom');
    await page.keyboard.press('Escape');
    await general.waitFor({ state: 'detached' });

    // Read back from the server on opening again.
    general = await openGeneral();
    assert.ok(await choice('custom').isChecked());
    assert.equal(await setting.getByTestId('mcp-registry-url').inputValue(), `${registry.url}/`);
    await choice('default').check();
    await until('the default registry again', async () => (await call('GET', '/api/preferences')).mcp_registry === '');
    await page.keyboard.press('Escape');
    await general.waitFor({ state: 'detached' });
    await openCatalog();
    await search('hello');
    await entry(HELLO.name).waitFor();
    await closeCatalog();
    assert.deepEqual(page.errors, []);
  });
});
