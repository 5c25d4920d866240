// The MCP Registry as the app shows it (pure): how old the cached results
// are, how a registry app runs, the notice over the registry's results, and
// Settings → General's registry choice turned into the preference and back.
import type { RegistryStatus } from './apps';

/** How long ago a time was, in the largest whole unit: "moments ago", "1 minute ago", "3 hours ago", "2 days ago". */
export function ageText(at: string | Date, now: Date = new Date()): string {
  const ms = now.getTime() - new Date(at).getTime();
  if (!Number.isFinite(ms)) return 'some time ago';
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 1) return 'moments ago';
  const unit = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'} ago`;
  if (minutes < 60) return unit(minutes, 'minute');
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return unit(hours, 'hour');
  return unit(Math.floor(hours / 24), 'day');
}

/** What sits over the registry's results: nothing, the registry off, or unreachable (with cached results or none). */
export type RegistryNotice = { kind: 'none' } | { kind: 'off' } | { kind: 'offline'; text: string; error: string };

export function registryNotice(st: RegistryStatus | undefined, now: Date = new Date()): RegistryNotice {
  if (!st || st.url === '') return { kind: 'off' };
  if (st.offline) {
    const text = st.cached_at ? `Registry unreachable — showing results cached ${ageText(st.cached_at, now)}` : 'Registry unreachable — nothing cached from it yet';
    return { kind: 'offline', text, error: st.error ?? '' };
  }
  if (st.error) return { kind: 'offline', text: 'The registry could not be searched', error: st.error };
  return { kind: 'none' };
}

const RUNTIMES: Record<string, string> = {
  npm: 'npm package (Node.js)',
  pypi: 'PyPI package (uv)',
  'streamable-http': 'Remote server (HTTP)',
  sse: 'Remote server (SSE)',
};

/** How a registry app runs, in words ('' when it did not say). */
export const runtimeLabel = (runtime: string | undefined): string => (runtime ? (RUNTIMES[runtime] ?? runtime) : '');

/** A registry app's version as shown: "v1.2.0" ('' for none). */
export const versionLabel = (version: string | undefined): string => (!version ? '' : /^\d/.test(version) ? `v${version}` : version);

// ---- Settings → General ----

export type RegistryChoice = 'default' | 'off' | 'custom';

/** The choice a saved preference reads as, with the custom URL ('' unless custom). */
export function registryChoice(pref: string | undefined): { choice: RegistryChoice; url: string } {
  const v = (pref ?? '').trim();
  if (v === '') return { choice: 'default', url: '' };
  if (v === 'off') return { choice: 'off', url: '' };
  return { choice: 'custom', url: v };
}

/** The preference a choice saves. */
export function registryPref(choice: RegistryChoice, url: string): string {
  if (choice === 'default') return '';
  if (choice === 'off') return 'off';
  return url.trim();
}

/** What is wrong with a custom registry URL, '' when nothing: https, or http for one on this computer (as the server checks). */
export function registryUrlError(raw: string): string {
  const v = raw.trim();
  if (v === '') return 'Enter the registry’s base URL, e.g. https://registry.example.com.';
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    return 'That is not a URL: it starts with https://.';
  }
  const local = ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname);
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && local)) return 'Use an https:// URL (http:// only for a registry on this computer).';
  if (u.username || u.password) return 'Leave the user name and password out of the URL.';
  if (u.search) return 'Use the registry’s base URL, without a ?query.';
  return '';
}

/** The host of a registry URL as the hint shows it. */
export function registryHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
