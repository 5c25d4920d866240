// The Memory and Skills tabs against a real `rerun serve` (no model needed):
// add, search, edit, correct and delete memories; create, edit, version,
// import (and refuse a zip-slip archive) skills.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addAgent, agent, apiClient, launchBrowser, openApp, openTab, shoot, startServer } from './harness.mjs';

let server;
let browser;
let context;
let call;

before(async () => {
  server = await startServer();
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  call = apiClient(server);
});
after(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
});

// ---- a minimal .zip writer (stored entries, no compression) ----------------

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** A .zip of { path: text } with every entry stored as it is. */
function makeZip(files) {
  const locals = [];
  const centrals = [];
  let offset = 0;
  for (const [name, text] of Object.entries(files)) {
    const nameBuf = Buffer.from(name, 'utf8');
    const data = Buffer.from(text, 'utf8');
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(0, 8); // stored
    local.writeUInt16LE(0, 10); // time
    local.writeUInt16LE(0x21, 12); // date: 1980-01-01
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBuf.length, 26);
    local.writeUInt16LE(0, 28);
    locals.push(local, nameBuf, data);

    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(0x0314, 4); // made by: Unix, 2.0
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(0, 10);
    central.writeUInt16LE(0, 12);
    central.writeUInt16LE(0x21, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBuf.length, 28);
    central.writeUInt16LE(0, 30); // extra
    central.writeUInt16LE(0, 32); // comment
    central.writeUInt16LE(0, 34); // disk
    central.writeUInt16LE(0, 36); // internal attrs
    central.writeUInt32LE((0o100644 << 16) >>> 0, 38); // a regular file, rw-r--r--
    central.writeUInt32LE(offset, 42);
    centrals.push(central, nameBuf);
    offset += local.length + nameBuf.length + data.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  const count = Object.keys(files).length;
  end.writeUInt16LE(count, 8);
  end.writeUInt16LE(count, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

// ---- helpers -----------------------------------------------------------------

const memories = (page) => page.getByTestId('memory');
const memoryWith = (page, text) => memories(page).filter({ has: page.getByTestId('memory-text').getByText(text, { exact: true }) });

async function addMemory(page, text) {
  await page.getByTestId('memory-new').fill(text);
  await page.getByTestId('memory-add').click();
  await memoryWith(page, text).waitFor();
}

describe('memory and skills', () => {
  let page;
  let handle;
  let agentId;
  let wsId;

  test('the Memory tab adds, searches, edits, corrects and deletes memories', async () => {
    page = await openApp(context, server);
    handle = await addAgent(page, 'Mia Memo', 'Main');
    agentId = await page.getByTestId('agent-panel').getAttribute('data-agent-id');
    wsId = (await call('GET', '/api/workspaces')).current;

    await openTab(page, 'Memory');
    await page.getByTestId('memory-empty').waitFor();

    await addMemory(page, 'Invoices go to billing@acme.test');
    const billing = memoryWith(page, 'Invoices go to billing@acme.test');
    assert.equal(await billing.getAttribute('data-state'), 'active');
    assert.ok(Number(await billing.getByTestId('memory-strength').getAttribute('aria-valuenow')) > 0.99, 'a new memory is at full strength');
    assert.match(await billing.textContent(), /Strong · 100%/);
    assert.match(await billing.textContent(), /Not used yet/);
    await billing.getByTestId('memory-by-you').waitFor();
    // "Useful": the person says it helped; the tab says why it is strong.
    await billing.getByTestId('memory-useful').click();
    await billing.filter({ hasText: /Used once · last/ }).waitFor();

    await addMemory(page, 'Standup is at 9:30 every Monday');
    assert.equal(await memories(page).count(), 2);

    // Search finds one; clearing it shows both again.
    await page.getByTestId('memory-search').fill('billing');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="memory"]').length === 1);
    await billing.waitFor();
    await page.getByTestId('memory-search').fill('');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="memory"]').length === 2);

    // Edit inline.
    await billing.getByTestId('memory-edit').click();
    await page.getByTestId('memory-edit-text').fill('Invoices go to billing@acme.test, cc the CFO');
    await page.getByTestId('memory-save').click();
    const edited = memoryWith(page, 'Invoices go to billing@acme.test, cc the CFO');
    await edited.waitFor();

    // Correct it: the new memory supersedes the old one, which only "Show retired" lists.
    await edited.getByTestId('memory-correct').click();
    await page.getByTestId('memory-correcting').waitFor();
    await page.getByTestId('memory-new').fill('Invoices go to ap@acme.test, cc the CFO');
    await page.getByTestId('memory-add').click();
    await memoryWith(page, 'Invoices go to ap@acme.test, cc the CFO').waitFor();
    await page.getByTestId('memory-note').filter({ hasText: 'Replaced an older memory' }).waitFor();
    await edited.waitFor({ state: 'detached' });
    assert.equal(await memories(page).count(), 2);

    await page.getByTestId('memory-show-retired').check();
    await edited.waitFor();
    assert.equal(await edited.getAttribute('data-state'), 'superseded');
    assert.match(await edited.getByTestId('memory-superseded-by').textContent(), /ap@acme\.test/);

    // A memory written elsewhere (another window, the agent) shows up live.
    await call('POST', `/api/workspaces/${wsId}/agents/${agentId}/memories`, { text: 'The CFO is Dana Whitfield' });
    await memoryWith(page, 'The CFO is Dana Whitfield').waitFor();

    await page.getByTestId('memory-new').fill('');
    await page.mouse.move(0, 0);
    await shoot(page, 'memory');

    // Delete with confirmation.
    const standup = memoryWith(page, 'Standup is at 9:30 every Monday');
    await standup.getByTestId('memory-delete').click();
    const dlg = page.getByTestId('delete-memory-dialog');
    await dlg.getByRole('button', { name: 'Delete memory' }).click();
    await dlg.waitFor({ state: 'detached' });
    await standup.waitFor({ state: 'detached' });
    const left = await call('GET', `/api/workspaces/${wsId}/agents/${agentId}/memories?retired=1`);
    assert.deepEqual(left.map((m) => m.text).sort(), [
      'Invoices go to ap@acme.test, cc the CFO',
      'Invoices go to billing@acme.test, cc the CFO',
      'The CFO is Dana Whitfield',
    ]);
    assert.deepEqual(page.errors, []);
  });

  test('the Skills tab creates a skill that survives a reload, and keeps its versions', async () => {
    await openTab(page, 'Skills');
    await page.getByTestId('skills-empty').waitFor();
    await shoot(page, 'skills-empty');

    await page.getByTestId('skill-new').click();
    await page.getByTestId('skill-name').fill('triage-inbox');
    await page.getByTestId('skill-description').fill('Sort the inbox: urgent first, then by customer');
    await page.getByTestId('skill-body').fill('# Triage\n\n1. Read every new mail\n2. Flag anything from a customer as **urgent**\n');
    await page.getByTestId('skill-save').click();
    await page.getByTestId('skill-status').filter({ hasText: 'Saved' }).waitFor();
    assert.equal(await page.getByTestId('skill-name').getAttribute('readonly'), '');

    const saved = await call('GET', `/api/workspaces/${wsId}/agents/${agentId}/skills/triage-inbox`);
    assert.equal(saved.description, 'Sort the inbox: urgent first, then by customer');
    assert.equal(saved.body.trim(), '# Triage\n\n1. Read every new mail\n2. Flag anything from a customer as **urgent**');

    await page.reload();
    await agent(page, handle).click();
    await openTab(page, 'Skills');
    const row = page.locator('[data-testid="skill"][data-skill-name="triage-inbox"]');
    await row.waitFor();
    assert.match(await row.textContent(), /urgent first/);
    await row.click();
    await page.waitForFunction(() => document.querySelector('[data-testid="skill-description"]')?.value?.includes('urgent first'));
    assert.equal(await page.getByTestId('skill-description').inputValue(), 'Sort the inbox: urgent first, then by customer');
    assert.match(await page.getByTestId('skill-body').inputValue(), /^# Triage\n/);

    await page.getByTestId('skill-body').fill('# Triage\n\n1. Read every new mail\n2. Flag anything from a customer as **urgent**\n3. Archive newsletters\n');
    await page.getByTestId('skill-save').click();
    await page.getByTestId('skill-status').filter({ hasText: 'Saved' }).waitFor();
    await page.getByTestId('skill-versions-toggle').click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="skill-version"]').length === 2);
    assert.equal(await page.getByTestId('skill-version-count').textContent(), '2');

    await page.getByTestId('skill-preview-toggle').click();
    await page.getByTestId('skill-preview').locator('strong', { hasText: 'urgent' }).waitFor();
    await shoot(page, 'skill-editor');

    // An old version opens in a dialog and can be restored.
    await page.locator('[data-testid="skill-version"][data-version="1"]').click();
    const dlg = page.getByTestId('skill-version-dialog');
    await dlg.waitFor();
    assert.doesNotMatch(await dlg.textContent(), /Archive newsletters/);
    await dlg.getByTestId('skill-version-restore').click();
    await dlg.waitFor({ state: 'detached' });
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="skill-version"]').length === 3);
    const restored = await call('GET', `/api/workspaces/${wsId}/agents/${agentId}/skills/triage-inbox`);
    assert.doesNotMatch(restored.body, /Archive newsletters/);
    await page.getByTestId('skill-back').click();
    assert.deepEqual(page.errors, []);
  });

  test('a .zip and a skill folder import with their reference files; a zip-slip archive is refused inline', async () => {
    const zip = makeZip({
      'pdf-tools/SKILL.md': '---\nname: pdf-tools\ndescription: Fill and check PDF forms\nlicense: MIT\n---\n\n# PDF tools\n\nSee reference.md for the field names.\n',
      'pdf-tools/reference.md': '# Fields\n\n- name\n- date\n',
    });
    await page.getByTestId('skill-import-input').setInputFiles({ name: 'pdf-tools.zip', mimeType: 'application/zip', buffer: zip });
    await page.getByTestId('skill-notice').filter({ hasText: 'Imported pdf-tools' }).waitFor();
    await page.getByTestId('skill-file').filter({ hasText: 'reference.md' }).waitFor();
    assert.equal(await page.getByTestId('skill-name').inputValue(), 'pdf-tools');

    // Saving keeps the other front-matter fields (license) as they were.
    await page.getByTestId('skill-description').fill('Fill and check PDF forms: tax, HR');
    await page.getByTestId('skill-save').click();
    await page.getByTestId('skill-status').filter({ hasText: 'Saved' }).waitFor();
    const pdf = await call('GET', `/api/workspaces/${wsId}/agents/${agentId}/skills/pdf-tools`);
    assert.equal(pdf.description, 'Fill and check PDF forms: tax, HR');
    assert.match(pdf.front_matter, /^license: MIT$/m);
    assert.deepEqual(pdf.files, ['reference.md']);

    await page.getByTestId('skill-back').click();
    await page.locator('[data-testid="skill"][data-skill-name="pdf-tools"]').waitFor();

    const evil = makeZip({ '../evil/SKILL.md': '---\nname: evil\ndescription: nope\n---\n' });
    await page.getByTestId('skill-import-input').setInputFiles({ name: 'evil.zip', mimeType: 'application/zip', buffer: evil });
    const err = page.getByTestId('skill-import-error');
    await err.waitFor();
    assert.match(await err.textContent(), /evil\.zip/);
    assert.match(await err.textContent(), /outside/);
    assert.equal(await page.getByTestId('skill').count(), 2);
    await page.mouse.move(0, 0);
    await shoot(page, 'skills');

    // A skill folder as it is (SKILL.md + reference files) imports through the folder picker, zipped in the browser.
    const tmp = mkdtempSync(join(tmpdir(), 'rerun-skill-'));
    try {
      const folder = join(tmp, 'notes-skill');
      mkdirSync(join(folder, 'reference'), { recursive: true });
      writeFileSync(join(folder, 'SKILL.md'), '---\nname: notes-skill\ndescription: Take meeting notes in the house style\n---\n\n# Notes\n\nFollow reference/style.md.\n');
      writeFileSync(join(folder, 'reference', 'style.md'), '# Style\n\n- bullets, not prose\n');
      await page.getByTestId('skill-import-folder-input').setInputFiles(folder);
      await page.getByTestId('skill-notice').filter({ hasText: 'Imported notes-skill with 1 reference file' }).waitFor();
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    await page.getByTestId('skill-file').filter({ hasText: 'reference/style.md' }).waitFor();
    assert.equal(await page.getByTestId('skill-name').inputValue(), 'notes-skill');
    const notes = await call('GET', `/api/workspaces/${wsId}/agents/${agentId}/skills/notes-skill`);
    assert.equal(notes.description, 'Take meeting notes in the house style');
    assert.deepEqual(notes.files, ['reference/style.md']);
    await page.getByTestId('skill-back').click();
    await page.locator('[data-testid="skill"][data-skill-name="notes-skill"]').waitFor();
    assert.equal(await page.getByTestId('skill').count(), 3);

    // Delete with confirmation.
    await page.locator('[data-testid="skill"][data-skill-name="pdf-tools"]').click();
    await page.getByTestId('skill-delete').click();
    const dlg = page.getByTestId('delete-skill-dialog');
    await dlg.getByRole('button', { name: 'Delete skill' }).click();
    await dlg.waitFor({ state: 'detached' });
    await page.locator('[data-testid="skill"][data-skill-name="pdf-tools"]').waitFor({ state: 'detached' });
    assert.equal(await page.getByTestId('skill').count(), 2);
    assert.deepEqual(page.errors, []);
  });
});
