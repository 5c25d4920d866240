import { describe, expect, it } from 'vitest';
import { render } from 'svelte/server';
import AboutDialog from '../components/AboutDialog.svelte';
import { buildDate, downloadedLine, DOCS_URL, LICENSE_URL, updateFailure, updateLine, type AppInfo } from './about';

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
});
