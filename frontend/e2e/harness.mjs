// Starts a real `rerun serve` and a headless Chromium for the e2e tests.
// The Go binary is built once per run (go's build cache makes later builds quick)
// from the repository root; it embeds frontend/dist, so `npm run build` first
// (`npm run e2e` does).
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = resolve(here, '..', '..');
export const shotsDir = join(here, 'screenshots');

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // Two pages watch each other in the tests: keep the one not in front running
  // at full speed (else each click waits seconds for animation frames).
  '--disable-renderer-backgrounding',
  '--disable-background-timer-throttling',
  '--disable-backgrounding-occluded-windows',
];

const built = new Map();

/** The binary $env names, else `go build ARGS` of the repository, built once per run. */
function goBinary(env, name, args) {
  if (process.env[env]) return process.env[env];
  if (!built.has(name)) {
    const dir = join(tmpdir(), 'rerun-e2e-bin');
    mkdirSync(dir, { recursive: true });
    const bin = join(dir, name);
    execFileSync('go', ['build', '-o', bin, ...args()], { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit'] });
    built.set(name, bin);
  }
  return built.get(name);
}

/** Builds the rerun binary (or uses $RERUN_BIN) and returns its path. */
export function rerunBinary() {
  return goBinary('RERUN_BIN', 'rerun', () => ['.']);
}

/** Where the test-only release key lives (never a real release's); the keyed binary trusts it. */
export const TEST_UPDATE_KEY = join(here, 'testdata', 'update-test.key');

/**
 * The server as version v1.4.2 trusting TEST_UPDATE_KEY (make's
 * build/bin/rerun-server-testkey via $RERUN_BIN_TESTKEY, or built here),
 * for the spec that serves a signed release feed.
 */
export function rerunTestKeyBinary() {
  return goBinary('RERUN_BIN_TESTKEY', 'rerun-testkey', () => {
    const pub = execFileSync('go', ['run', './build/feed', 'pubkey', TEST_UPDATE_KEY], { cwd: repoRoot, encoding: 'utf8' }).trim();
    return ['-ldflags', `-X main.version=v1.4.2 -X main.updateKey=${pub}`, '.'];
  });
}

/** Builds the fake model server (or uses $RERUN_FAKELLM) and returns its path. */
export function fakeLLMBinary() {
  return goBinary('RERUN_FAKELLM', 'fakellm', () => ['./backend/llm/llmtest/cmd/fakellm']);
}

/**
 * Runs the fake model server (backend/llm/llmtest): "hello" streams back
 * "You said: hello"; "use tool NAME {json}" calls that tool, then answers
 * "Tool said: …". Returns { url, openaiBaseURL (url + /v1), stop() }.
 */
export async function startFakeLLM() {
  const proc = spawn(fakeLLMBinary(), [], { stdio: ['ignore', 'pipe', 'pipe'] });
  const url = await new Promise((res, rej) => {
    let out = '';
    const timer = setTimeout(() => rej(new Error(`fakellm printed no URL in ${PATIENCE} ms: ${out}`)), PATIENCE);
    proc.stdout.on('data', (d) => {
      out += d;
      const line = out.split('\n')[0];
      if (out.includes('\n')) {
        clearTimeout(timer);
        res(line.trim());
      }
    });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      rej(new Error(`fakellm exited (${code}) before printing its URL: ${out}`));
    });
  });
  return {
    url,
    openaiBaseURL: `${url}/v1`,
    async stop() {
      if (proc.exitCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
      if (proc.exitCode === null) proc.kill('SIGKILL');
    },
  };
}

/** Model settings the server must not pick up from the machine running the tests. */
const MODEL_ENV = ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OLLAMA_HOST'];

/**
 * Runs `rerun serve --port 0 --data-dir <fresh dir>` and waits for its URL.
 * Without `llm` the server has no model provider; with a fake from
 * startFakeLLM() it talks to it as OpenAI. The Foreman's onboarding is off
 * (RERUN_ONBOARDING=off) unless `onboarding: true`; the MCP registry is off
 * unless `registry` gives a base URL (RERUN_MCP_REGISTRY). `bin` runs
 * another build (rerunTestKeyBinary()).
 * Returns { url (with token), origin, dataDir, stop() }.
 */
export async function startServer({ dataDir, llm, onboarding = false, registry = 'off', bin = rerunBinary() } = {}) {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'rerun-e2e-data-'));
  const env = { ...process.env };
  for (const k of MODEL_ENV) delete env[k];
  if (llm) Object.assign(env, { OPENAI_API_KEY: 'test', OPENAI_BASE_URL: llm.openaiBaseURL });
  env.RERUN_ONBOARDING = onboarding ? 'on' : 'off';
  env.RERUN_MCP_REGISTRY = registry; // the MCP registry the Apps catalog searches ('off': none)
  const proc = spawn(bin, ['serve', '--port', '0', '--data-dir', dir], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let stderr = '';
  proc.stderr.on('data', (d) => {
    stderr += d;
    if (process.env.E2E_VERBOSE) process.stderr.write(d);
  });
  const url = await new Promise((res, rej) => {
    let out = '';
    const timer = setTimeout(() => rej(new Error(`rerun serve printed no URL in ${PATIENCE} ms.\nstdout: ${out}\nstderr: ${stderr}`)), PATIENCE);
    proc.stdout.on('data', (d) => {
      out += d;
      const m = /http:\/\/127\.0\.0\.1:\d+\/\?token=\S+/.exec(out);
      if (m) {
        clearTimeout(timer);
        res(m[0]);
      }
    });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      rej(new Error(`rerun serve exited (${code}) before printing a URL.\nstdout: ${out}\nstderr: ${stderr}`));
    });
  });
  const origin = new URL(url).origin;
  return {
    url,
    origin,
    dataDir: dir,
    stderr: () => stderr,
    async stop({ keepData = false } = {}) {
      if (proc.exitCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
        if (proc.exitCode === null) proc.kill('SIGKILL');
      }
      if (!keepData && !dataDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * How long a test waits for one thing that makes no countable progress (an
 * element, a process printing its address). Far above what any takes on a
 * loaded machine: a slow machine makes a test slower, never failing.
 */
export const PATIENCE = 120_000;

/** Launches Chromium; every context it opens waits up to PATIENCE (Playwright's own default is 30 s). */
export async function launchBrowser() {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (...args) => {
    const context = await newContext(...args);
    context.setDefaultTimeout(PATIENCE);
    return context;
  };
  return browser;
}

/** A page signed in to the server (opening /?token=… sets the cookie and redirects to /). */
export async function openApp(context, server) {
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (err) => {
    page.errors.push(err);
    console.error('page error:', err);
  });
  await page.goto(server.url);
  await page.getByTestId('workspace-name').filter({ hasNotText: 'Loading…' }).waitFor();
  await page.locator('[data-testid="box"]').first().waitFor();
  return page;
}

export function shotPath(name) {
  mkdirSync(shotsDir, { recursive: true });
  return join(shotsDir, name);
}

/** Screenshots the page in light and dark: `<name>-light.png`, `<name>-dark.png`. */
export async function shoot(page, name) {
  for (const scheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.waitForTimeout(150);
    await page.screenshot({ path: shotPath(`${name}-${scheme}.png`) });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

/** axe-core: from frontend/node_modules when installed, else $AXE_PATH (e.g. an `npm pack axe-core` unpacked in /tmp). */
const AXE = [process.env.AXE_PATH, join(repoRoot, 'frontend/node_modules/axe-core/axe.min.js'), '/tmp/axe/package/axe.min.js'].find(
  (p) => p && existsSync(p),
);

/**
 * Runs axe on the page (or the element matching sel) in light and dark;
 * fails on serious or critical violations. The page's context needs
 * bypassCSP: axe is injected as an inline script.
 */
export async function axeClean(page, what, sel = null) {
  assert.ok(AXE, 'axe-core not found: add it to frontend/package.json or set AXE_PATH');
  if (!(await page.evaluate(() => 'axe' in window))) {
    await page.addScriptTag({ path: AXE });
    // Colours are checked as they settle, not halfway through a transition.
    await page.addStyleTag({ content: '*, *::before, *::after { transition: none !important; animation: none !important; }' });
  }
  for (const scheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.waitForFunction((s) => document.documentElement.dataset.theme === s, scheme);
    const bad = await page.evaluate(async (sel) => {
      const root = sel ? document.querySelector(sel) : document;
      // @ts-ignore injected above
      const r = await window.axe.run(root, { resultTypes: ['violations'], runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
      return r.violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => ({ id: v.id, help: v.help, nodes: v.nodes.slice(0, 6).map((n) => `${n.target.join(' ')} :: ${n.failureSummary?.split('\n').slice(1, 2).join(' ')}`) }));
    }, sel);
    assert.deepEqual(bad, [], `${what} (${scheme}): ${JSON.stringify(bad, null, 1)}`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

// ---- what a person does -------------------------------------------------

export const box = (page, name) => page.locator(`[data-testid="box"][data-box-name="${name}"]`);
export const agent = (page, handle) => page.locator(`[data-testid="agent"][data-agent-handle="${handle}"]`);

export async function addBox(page, name) {
  await page.getByTestId('add-box').click();
  const dlg = page.getByTestId('new-box-dialog');
  await dlg.getByLabel('Box name').fill(name);
  await dlg.getByRole('button', { name: 'Create box' }).click();
  await dlg.waitFor({ state: 'detached' });
  await box(page, name).waitFor();
}

/** Creates an agent through the dialog; returns its handle (from the live preview). */
export async function addAgent(page, name, boxName) {
  await page.getByTestId('add-agent').click();
  const dlg = page.getByTestId('new-agent-dialog');
  await dlg.getByLabel('Name').fill(name);
  if (boxName) await dlg.getByLabel('Box').selectOption({ label: boxName });
  const preview = dlg.getByTestId('handle-preview').locator('strong');
  await preview.waitFor();
  const handle = (await preview.textContent()).trim().replace(/^@/, '');
  await dlg.getByRole('button', { name: 'Create coworker' }).click();
  await dlg.waitFor({ state: 'detached' });
  await agent(page, handle).waitFor();
  return handle;
}

/** Drags an agent onto a box with real mouse events. */
export async function dragAgentTo(page, handle, boxName) {
  const from = await agent(page, handle).locator('circle').first().boundingBox();
  const to = await box(page, boxName).locator('polygon.top').boundingBox();
  const sx = from.x + from.width / 2;
  const sy = from.y + from.height / 2;
  const tx = to.x + to.width / 2;
  const ty = to.y + to.height / 2;
  await page.mouse.move(sx, sy);
  await page.mouse.down();
  await page.mouse.move(sx + 10, sy + 6, { steps: 3 });
  await page.mouse.move(tx, ty, { steps: 14 });
  await page.mouse.up();
}

/** Opens a tab of the agent panel by clicking it. */
export async function openTab(page, name) {
  const tab = page.getByTestId('agent-panel').getByRole('tab', { name, exact: true });
  await tab.click();
  await page.waitForFunction((n) => [...document.querySelectorAll('[role=tab]')].some((t) => t.textContent.trim() === n && t.getAttribute('aria-selected') === 'true'), name);
}

/** Calls the HTTP API as the UI would (bearer token instead of the cookie). */
export function apiClient(server) {
  const token = new URL(server.url).searchParams.get('token');
  return async (method, path, body) => {
    const res = await fetch(server.origin + path, {
      method,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
}

/** Waits until a run has ended and returns it. */
export async function runEnded(call, wsId, runId) {
  return until(`run ${runId} to end`, async () => {
    const r = await call('GET', `/api/workspaces/${wsId}/runs/${runId}`);
    return ['done', 'failed', 'cancelled'].includes(r.status) && r;
  });
}

export async function closePanel(page) {
  await page.getByTestId('panel-close').click();
  await page.getByTestId('agent-panel').waitFor({ state: 'detached' });
}

/** Polls fn every 50 ms until it returns something truthy (returned), or throws after ms. */
export async function until(what, fn, ms = PATIENCE) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}


let builtRelay;

/** Builds rerun-relay (sync/cmd/rerun-relay) once per run and returns its path. */
export function relayBinary() {
  if (builtRelay) return builtRelay;
  const dir = join(tmpdir(), 'rerun-e2e-bin');
  mkdirSync(dir, { recursive: true });
  const bin = join(dir, 'rerun-relay');
  execFileSync('go', ['build', '-o', bin, './sync/cmd/rerun-relay'], { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit'] });
  builtRelay = bin;
  return bin;
}

/**
 * Runs rerun-relay on the SQLite file db, listening on listen (127.0.0.1:0
 * picks a port), with more flags in args. Resolves once it listens with
 * { proc, url, stop() } (stop kills it and waits for the exit).
 */
export function startRelay(db, { listen = '127.0.0.1:0', args = [] } = {}) {
  const proc = spawn(relayBinary(), ['-db', db, '-listen', listen, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGKILL');
    await exited;
  };
  return new Promise((res, rej) => {
    let out = '';
    const timer = setTimeout(() => rej(new Error(`rerun-relay printed no address in ${PATIENCE} ms: ${out}`)), PATIENCE);
    const read = (d) => {
      out += d;
      const m = /rerun-relay listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        res({ proc, url: m[1], stop });
      }
    };
    proc.stdout.on('data', read);
    proc.stderr.on('data', read);
    proc.on('exit', (code) => rej(new Error(`rerun-relay exited (${code}): ${out}`)));
  });
}
