import { describe, expect, it } from 'vitest';
import { render } from 'svelte/server';
import AboutDialog from '../components/AboutDialog.svelte';
import {
  buildDate,
  downloadedLine,
  DOCS_URL,
  lastCheckLine,
  lastStatus,
  LICENSE_URL,
  updateFailure,
  updateLine,
  updatePill,
  type AppInfo,
  type LastUpdate,
} from './about';
import { updates } from './updates.svelte';

const info: AppInfo = {
  version: 'v1.4.2',
  commit: 'abc1234def56',
  build_date: '2026-12-02T02:00:00Z',
  data_dir: '/home/ana/.local/share/rerun',
  local_url: 'http://127.0.0.1:7777',
  mcp_url: 'http://127.0.0.1:7777/api/mcp/account',
};

describe('about', () => {
  it('shows the build date in UTC, or what the build said', () => {
    expect(buildDate('2026-12-02T02:00:00Z')).toBe('2 Dec 2026, 02:00 UTC');
    expect(buildDate('unknown')).toBe('unknown');
    expect(buildDate('')).toBe('unknown');
  });

  it('says whether a newer Rerun is available', () => {
    expect(updateLine({ current: 'v1.4.2', latest: 'v1.5.0', available: true })).toBe('Rerun v1.5.0 is available (you have v1.4.2).');
    expect(updateLine({ current: 'v1.5.0', latest: 'v1.5.0', available: false })).toBe('Rerun v1.5.0 is up to date (the newest release is v1.5.0).');
  });

  it('says a failed check as a sentence', () => {
    expect(updateFailure('could not check for updates: github.com did not answer')).toBe('Could not check for updates: github.com did not answer.');
    expect(updateFailure('update checks are off.')).toBe('Update checks are off.');
    expect(updateFailure('')).toBe('Could not check for updates.');
  });

  it('renders version, commit, build date, data folder and links', () => {
    const { body } = render(AboutDialog, { props: { onClose: () => {}, initial: info } });
    for (const want of ['About Rerun', 'v1.4.2', 'abc1234def56', '2 Dec 2026, 02:00 UTC', '/home/ana/.local/share/rerun', DOCS_URL, LICENSE_URL, 'Check for updates']) {
      expect(body).toContain(want);
    }
  });

  it('says a downloaded package was verified, with its file name and size', () => {
    expect(downloadedLine({ version: 'v1.5.0', path: '/home/ana/.local/share/rerun/updates/rerun_1.5.0_amd64.deb', sha256: 'ab', size: 48_500_000 })).toBe(
      'Downloaded rerun_1.5.0_amd64.deb (46 MB); its signature checks out.',
    );
    expect(downloadedLine({ version: 'v1.5.0', path: 'C:\\Users\\ana\\updates\\rerun-setup.exe', sha256: 'ab', size: 3_000_000 })).toBe(
      'Downloaded rerun-setup.exe (2.9 MB); its signature checks out.',
    );
  });

  const found: LastUpdate = {
    checks: 'daily',
    checked_at: '2026-03-02T09:00:00Z',
    current: 'v1.4.2',
    latest: 'v1.5.0',
    available: true,
    url: 'https://example.com/rerun-setup.exe',
    sha256: 'ab'.repeat(32),
    notes: 'Tray icon.',
  };
  const now = new Date('2026-03-02T11:05:00Z');

  it('shows the pill only while the last check found a newer release', () => {
    expect(updatePill(found)).toEqual({ long: 'Rerun v1.5.0 is available', short: 'v1.5.0 available' });
    expect(updatePill({ ...found, available: false })).toBeNull();
    expect(updatePill({ checks: 'daily', checked_at: found.checked_at, current: 'v1.4.2', error: 'the release feed’s signature is not valid' })).toBeNull();
    expect(updatePill({ ...found, error: 'x' })).toBeNull(); // never a release from a failed check
    expect(updatePill({ checks: 'off', off: 'update checks are off' })).toBeNull();
    expect(updatePill(null)).toBeNull();
  });

  it('says when the last check was and how Rerun checks', () => {
    expect(lastCheckLine(found, now)).toBe('Checked 2 hours ago. Rerun checks once a day.');
    expect(lastCheckLine({ ...found, checks: 'manual', checked_at: '2026-03-02T11:04:30Z' }, now)).toBe('Checked moments ago. Rerun checks only when you ask.');
    expect(lastCheckLine({ checks: 'daily', current: 'v1.4.2', checked_at: '2026-02-28T10:00:00Z', error: 'could not check for updates' }, now)).toBe(
      'The last check failed 2 days ago. Rerun checks once a day.',
    );
    expect(lastCheckLine({ checks: 'manual' }, now)).toBe('Rerun checks only when you ask.');
    expect(lastCheckLine({ checks: 'off', off: 'update checks are off' }, now)).toBe('');
  });

  it('turns the last check into the status About shows, none after a failure', () => {
    expect(lastStatus(found)).toMatchObject({ current: 'v1.4.2', latest: 'v1.5.0', available: true, notes: 'Tray icon.' });
    expect(lastStatus({ ...found, available: undefined })?.available).toBe(false);
    expect(lastStatus({ ...found, error: 'signature' })).toBeNull();
    expect(lastStatus({ checks: 'daily' })).toBeNull();
  });

  it('opens with the notes and Download and verify of a release the last check found', () => {
    updates.last = found;
    try {
      const { body } = render(AboutDialog, { props: { onClose: () => {}, initial: info } });
      for (const want of ['Rerun v1.5.0 is available (you have v1.4.2).', 'Tray icon.', 'Download and verify Rerun v1.5.0', 'Rerun checks once a day.']) {
        expect(body).toContain(want);
      }
    } finally {
      updates.last = null;
    }
  });
});
