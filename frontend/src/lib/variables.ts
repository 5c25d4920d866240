// Workspace variables (pure): the names Settings → Variables accepts.

/** Settings → Variables: whether values sync to the other devices (end-to-end encrypted). */
export type VariableSync = { enabled: boolean };

/** A workspace variable (never its value); hosts: where its value may be sent, [] for any host. */
export type Variable = { name: string; hosts: string[]; created_at: string; updated_at: string };

export type Variables = { key_store: 'keychain' | 'file'; key_store_note: string; variables: Variable[] };

export const NAME_RULE = 'A–Z, 0–9 and _, starting with a letter, up to 64 characters';

/** What a person types, as a variable name: upper case, spaces and dashes as "_". */
export const normalizeName = (typed: string): string => typed.toUpperCase().replace(/[\s-]+/g, '_');

/** What is wrong with a name; '' when it is fine. */
export function nameError(name: string): string {
  if (!name) return 'Name the variable.';
  if (name.length > 64) return 'Names are at most 64 characters.';
  if (!/^[A-Z]/.test(name)) return 'Start the name with a letter.';
  if (!/^[A-Z][A-Z0-9_]*$/.test(name)) return `Use ${NAME_RULE}.`;
  return '';
}

/** What is wrong with a value; '' when it is fine (4 bytes to 64 KiB). */
export function valueError(value: string): string {
  const bytes = new TextEncoder().encode(value).length;
  if (bytes === 0) return 'Enter the value.';
  if (bytes < 4) return 'Values are at least 4 characters.';
  if (bytes > 64 * 1024) return 'Values are at most 64 KiB.';
  return '';
}

/** How a variable is referenced in commands, headers and connector settings. */
export const reference = (name: string) => `\${${name}}`;

/** The hosts a person typed for a variable: split at commas, spaces and line breaks, lower case, each once. */
export function splitHosts(typed: string): string[] {
  const out: string[] = [];
  for (const h of typed.split(/[\s,]+/)) {
    const host = h.trim().toLowerCase().replace(/\.$/, '');
    if (host && !out.includes(host)) out.push(host);
  }
  return out;
}

const LABEL = '[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?';
const HOST_NAME = new RegExp(`^${LABEL}(\\.${LABEL})*$`);
const IP = /^(\d{1,3}(\.\d{1,3}){3}|\[?[0-9a-f:]*:[0-9a-f:.]*\]?)$/;

/** What is wrong with one host of a variable's list; '' when it is fine (the app checks it again). */
export function hostError(host: string): string {
  if (host === '*') return 'Leave the hosts empty to allow every host.';
  if (host.includes('://') || /[/?#@]/.test(host)) {
    let alone = '';
    try {
      alone = new URL(host.includes('://') ? host : `x://${host}`).hostname;
    } catch {
      /* no host to suggest */
    }
    return `Write the host alone${alone ? ` (${alone})` : ''}, without scheme, path or user.`;
  }
  if (IP.test(host)) return '';
  if (/:\d*$/.test(host)) return `Write ${host.replace(/:\d*$/, '')} without the port: the hosts hold on every port.`;
  const name = host.startsWith('*.') ? host.slice(2) : host;
  if (name.length > 253 || !HOST_NAME.test(name)) return `${host} is not a host name: write one like api.github.com, or *.github.com for it and every host under it.`;
  if (host.startsWith('*.') && !name.includes('.')) return `${host} would allow a whole top-level domain: name one like *.example.com.`;
  return '';
}

/** The first problem of a typed host list; '' when there is none. */
export function hostsError(typed: string): string {
  for (const h of splitHosts(typed)) {
    const err = hostError(h);
    if (err) return err;
  }
  if (splitHosts(typed).length > 32) return 'A variable names at most 32 hosts: use a wildcard such as *.example.com.';
  return '';
}

/** Where a variable's value may go, in a row of Settings → Variables. */
export const hostsSummary = (hosts: string[] | undefined): string =>
  hosts && hosts.length > 0 ? `Only sent to ${hosts.join(', ')}` : 'Sent to any host';
