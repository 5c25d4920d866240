// Apps (pure): how an installed app's status, tools and transport read, the
// catalog's categories and search highlights, the diff of a tool definition a
// server changed, and the custom server form turned into a request.
import type { ConnectorRequest } from './pausetypes';

export type AppAuth = 'none' | 'api_key' | 'oauth';

export type TransportType = 'stdio' | 'http' | 'sse';

/** How an MCP server is reached; strings may hold ${NAME} references, never values. */
export type AppTransport = {
  type: TransportType;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  url?: string;
  headers?: Record<string, string>;
};

/** A workspace variable an app needs; url: where to get it. */
export type AppVariable = { name: string; label: string; help: string; url: string };

/** Where an app comes from: Rerun's reviewed catalog, the MCP Registry (not reviewed by Rerun), or a custom server. */
export type AppSource = 'builtin' | 'registry' | 'custom';

/** A catalog entry: a built-in app, or an MCP Registry server (id namespace/name). */
export type App = {
  id: string;
  name: string;
  description: string;
  category: string;
  keywords: string[] | null;
  homepage: string;
  auth: AppAuth;
  transport: AppTransport;
  variables: AppVariable[] | null;
  /** For a registry app, the skill drafted from its description. */
  skill: string;
  /** An https or data: image URL; '' (or absent) shows a letter or the bundled icon. */
  icon?: string;
  source: AppSource;
  /** A registry app's version. */
  version?: string;
  /** How a registry app runs: npm, pypi, streamable-http or sse. */
  runtime?: string;
  /** Why a registry app cannot install on this computer; absent when it can. */
  needs?: string;
  /** The variables of a registry app that are secrets. */
  secret?: Record<string, boolean>;
};

/** Where the registry part of a catalog search came from. */
export type RegistryStatus = {
  /** '' when the registry is off. */
  url: string;
  /** The registry could not be reached: its results come from the cache, cached_at old. */
  offline: boolean;
  cached_at?: string;
  error?: string;
};

/** A catalog search: built-in apps first, then the registry's. */
export type AppCatalog = { version: number; apps: App[]; registry: RegistryStatus };

export type ConnectorStatus = 'untested' | 'connected' | 'needs_sign_in' | 'error' | 'blocked_changed';

export type ToolState = 'approved' | 'changed' | 'new' | 'removed';

export type ToolDefinition = { name: string; description: string; input_schema: unknown };

/** One tool of an installed app; live: the server's definition when it differs from the approved one. */
export type ConnectorTool = {
  name: string;
  agent_name: string;
  state: ToolState;
  definition: ToolDefinition;
  live?: ToolDefinition | null;
};

/** An app or custom MCP server installed on an agent. */
export type Connector = {
  id: string;
  agent_id: string;
  /** Its tools are <slug>__<tool>. */
  slug: string;
  /** '' for a custom server; namespace/name for a registry app. */
  catalog_id: string;
  source: AppSource;
  icon?: string;
  /** The skill drafted for a registry app from its description and tools ('' or absent for the others). */
  skill?: string;
  name: string;
  auth: AppAuth;
  transport: AppTransport;
  variables: string[] | null;
  /** Variables not set yet. */
  missing: string[] | null;
  status: ConnectorStatus;
  error: string;
  /** One sentence: what the person must do ('' when nothing). */
  next: string;
  tools: ConnectorTool[] | null;
  pinned_at: string | null;
  checked_at: string | null;
  created_at: string;
  updated_at: string;
};

/** What installing answered: form null when nothing is missing. */
export type InstalledApp = { connector: Connector; form: ConnectorRequest | null };

/** A custom MCP server: a URL with headers, or a command with args and env (values may use ${VAR}). */
export type CustomServerInput = {
  name: string;
  transport: TransportType;
  url?: string;
  headers?: Record<string, string>;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  /** Browser sign-in (remote servers only). */
  oauth?: boolean;
};

/** What "Test connection" found. */
export type TriedServer = { tools: { name: string; description: string }[] };

// ---- status ----

export type Tone = 'ok' | 'warn' | 'bad' | 'idle';

const STATUS: Record<ConnectorStatus, { label: string; tone: Tone }> = {
  connected: { label: 'Connected', tone: 'ok' },
  needs_sign_in: { label: 'Needs sign-in', tone: 'warn' },
  error: { label: 'Error', tone: 'bad' },
  blocked_changed: { label: 'Tools changed', tone: 'bad' },
  untested: { label: 'Not connected yet', tone: 'idle' },
};

export function statusInfo(status: string): { label: string; tone: Tone } {
  return STATUS[status as ConnectorStatus] ?? { label: status || 'Unknown', tone: 'idle' };
}

export function authLabel(auth: AppAuth | string): string {
  switch (auth) {
    case 'api_key':
      return 'API key';
    case 'oauth':
      return 'Browser sign-in';
    default:
      return 'No sign-in';
  }
}

/** The sign-in an installed app still waits for: the browser (OAuth token only), the form, or none. */
export function signInKind(c: Connector): 'browser' | 'form' | null {
  if (c.status !== 'needs_sign_in') return null;
  const missing = c.missing ?? [];
  if (c.auth === 'oauth' && missing.length > 0 && missing.every((n) => n.endsWith('_OAUTH_TOKEN'))) return 'browser';
  if (c.auth === 'oauth' && missing.length === 0) return 'browser';
  return 'form';
}

/**
 * What an app waiting for sign-in asks of the person, in their words (the
 * server's `next` is written for the agent: "Fill the setup form … in the
 * agent's Apps tab (GITHUB_TOKEN)").
 */
export function signInHint(c: Connector): string {
  const kind = signInKind(c);
  if (kind === 'browser') return `Connect ${c.name} with your browser so this coworker can use it.`;
  if ((c.missing ?? []).length === 0) return `${c.name} did not accept the sign-in: sign in again.`;
  return `${c.name} needs your sign-in before this coworker can use it.`;
}

const TOOL_STATE: Record<ToolState, string> = { approved: '', changed: 'Changed', new: 'New', removed: 'Removed' };

/** The badge of a tool ('' for an approved one). */
export const toolStateLabel = (state: ToolState | string): string => TOOL_STATE[state as ToolState] ?? state;

/** Tools the person must review before Approve: changed, new or removed. */
export const toolsToReview = (c: Connector): ConnectorTool[] => (c.tools ?? []).filter((t) => t.state !== 'approved');

// ---- how it runs ----

/** A command line argument as a shell would need it. */
export function shellArg(a: string): string {
  if (a !== '' && /^[\w@%+=:,./${}-]+$/.test(a)) return a;
  return `'${a.replace(/'/g, `'\\''`)}'`;
}

/** One line saying how the server runs: its command, or its URL's host. */
export function transportSummary(t: AppTransport): string {
  if (t.type === 'stdio') return [t.command ?? '', ...(t.args ?? [])].filter((x) => x !== '').map(shellArg).join(' ');
  const url = t.url ?? '';
  if (url.startsWith('${')) return `${transportLabel(t.type)} · ${url}`;
  try {
    const u = new URL(url);
    return `${transportLabel(t.type)} · ${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return url;
  }
}

export function transportLabel(t: TransportType | string): string {
  switch (t) {
    case 'stdio':
      return 'Local command';
    case 'sse':
      return 'SSE';
    default:
      return 'Streamable HTTP';
  }
}

// ---- catalog ----

const CATEGORY_WORDS: Record<string, string> = { ai: 'AI', crm: 'CRM' };

/** "developer" → "Developer", "crm" → "CRM". */
export const categoryLabel = (c: string): string => CATEGORY_WORDS[c] ?? (c ? c[0]!.toUpperCase() + c.slice(1) : 'Other');

export type CategoryChip = { id: string; label: string; count: number };

/** The categories of some apps with how many each has, biggest first (then by name). */
export function categoryChips(apps: App[]): CategoryChip[] {
  const counts = new Map<string, number>();
  for (const a of apps) counts.set(a.category, (counts.get(a.category) ?? 0) + 1);
  return [...counts]
    .map(([id, count]) => ({ id, label: categoryLabel(id), count }))
    .sort((a, b) => b.count - a.count || a.label.localeCompare(b.label));
}

/** The words of a search, lowercase. */
export const queryWords = (q: string): string[] => q.toLowerCase().split(/\s+/).filter(Boolean);

export type Segment = { text: string; hit: boolean };

/** Splits text into the parts matching a word of the query (case-insensitive) and the rest. */
export function highlight(text: string, q: string): Segment[] {
  const words = queryWords(q);
  if (words.length === 0 || !text) return text ? [{ text, hit: false }] : [];
  const lower = text.toLowerCase();
  const hit = new Array<boolean>(text.length).fill(false);
  for (const w of words) {
    for (let i = lower.indexOf(w); i >= 0; i = lower.indexOf(w, i + 1)) hit.fill(true, i, i + w.length);
  }
  const out: Segment[] = [];
  for (let i = 0; i < text.length; i++) {
    const last = out[out.length - 1];
    if (last && last.hit === hit[i]) last.text += text[i];
    else out.push({ text: text[i]!, hit: hit[i]! });
  }
  return out;
}

/**
 * Where the words of a search matched an app when no word shows in its name or
 * description: its keywords or its skill ('' when the match is visible, or none).
 * The server ranks; this tells the person why a result is there.
 */
export function hiddenMatch(app: App, q: string): string {
  const words = queryWords(q);
  if (words.length === 0) return '';
  const shown = `${app.name} ${app.description} ${app.category}`.toLowerCase();
  const unseen = words.filter((w) => !shown.includes(w));
  if (unseen.length === 0) return '';
  const keywords = (app.keywords ?? []).filter((k) => unseen.some((w) => k.toLowerCase().startsWith(w)));
  if (keywords.length > 0) return `Matches ${keywords.join(', ')}`;
  if (unseen.some((w) => app.skill.toLowerCase().includes(w))) return 'Matches what its tools do';
  return '';
}

// ---- tool definitions ----

/** A definition as lines of text: name, description, then the input schema as indented JSON. */
export function definitionLines(d: ToolDefinition): string[] {
  const lines = [`name: ${d.name}`];
  const desc = (d.description ?? '').replace(/\r\n/g, '\n').split('\n');
  lines.push(`description: ${desc[0] ?? ''}`, ...desc.slice(1).map((l) => `  ${l}`));
  const schema = d.input_schema === undefined || d.input_schema === null ? '{}' : JSON.stringify(sortKeys(d.input_schema), null, 2);
  lines.push('input_schema:', ...schema.split('\n').map((l) => `  ${l}`));
  return lines;
}

/** Sorts object keys so a reordered schema is no change. */
function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
    );
  }
  return v;
}

/** A line diff (longest common subsequence): ' ' kept, '-' only in a, '+' only in b. */
export function lineDiff(a: string[], b: string[]): { op: ' ' | '-' | '+'; text: string }[] {
  const n = a.length;
  const m = b.length;
  // lcs[i][j]: the length of the common subsequence of a[i:] and b[j:].
  const lcs = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const out: { op: ' ' | '-' | '+'; text: string }[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      out.push({ op: ' ', text: a[i++]! });
      j++;
    } else if (i < n && (j === m || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) {
      out.push({ op: '-', text: a[i++]! });
    } else {
      out.push({ op: '+', text: b[j++]! });
    }
  }
  return out;
}

/** Lines of context around each change in a definition diff. */
const CONTEXT = 3;

/**
 * A unified diff from the approved definition of a tool to the server's
 * current one, with a few lines of context around each change; null old: a
 * new tool, null live: a removed one.
 */
export function definitionDiff(old: ToolDefinition | null, live: ToolDefinition | null): string {
  const ops = lineDiff(old ? definitionLines(old) : [], live ? definitionLines(live) : []);
  const out = ['--- approved', '+++ on the server now'];
  const changed = ops.flatMap((o, i) => (o.op === ' ' ? [] : [i]));
  let k = 0;
  while (k < changed.length) {
    // A hunk runs from a change to the last one no more than 2×CONTEXT kept lines after the previous.
    let last = k;
    while (last + 1 < changed.length && changed[last + 1]! - changed[last]! <= 2 * CONTEXT + 1) last++;
    const from = Math.max(0, changed[k]! - CONTEXT);
    const to = Math.min(ops.length, changed[last]! + CONTEXT + 1);
    const before = ops.slice(0, from);
    const hunk = ops.slice(from, to);
    const oldStart = before.filter((o) => o.op !== '+').length;
    const newStart = before.filter((o) => o.op !== '-').length;
    const oldLen = hunk.filter((o) => o.op !== '+').length;
    const newLen = hunk.filter((o) => o.op !== '-').length;
    out.push(`@@ -${oldStart + (oldLen ? 1 : 0)},${oldLen} +${newStart + (newLen ? 1 : 0)},${newLen} @@`, ...hunk.map((o) => o.op + o.text));
    k = last + 1;
  }
  return out.join('\n');
}

/** The diff a tool shows in the review: approved → live for its state. */
export function toolDiff(t: ConnectorTool): string {
  switch (t.state) {
    case 'new':
      return definitionDiff(null, t.live ?? t.definition);
    case 'removed':
      return definitionDiff(t.definition, null);
    default:
      return definitionDiff(t.definition, t.live ?? t.definition);
  }
}

// ---- the custom server form ----

export type Row = { key: string; value: string };

export type CustomDraft = {
  name: string;
  transport: TransportType;
  url: string;
  headers: Row[];
  /** The whole command line: the command and its arguments, quoted like a shell. */
  command: string;
  env: Row[];
  /** Sign in with the browser (remote servers). */
  oauth: boolean;
};

export const emptyDraft = (): CustomDraft => ({
  name: '',
  transport: 'http',
  url: '',
  headers: [{ key: '', value: '' }],
  command: '',
  env: [{ key: '', value: '' }],
  oauth: false,
});

/**
 * Splits a command line into words like a POSIX shell: spaces separate, '…'
 * keeps everything, "…" keeps all but \" \\ \$, a backslash outside quotes
 * escapes the next character. ${VAR} is kept for the server to fill.
 */
export function splitCommand(line: string): string[] {
  const out: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '' | "'" | '"' = '';
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quote === "'") {
      if (ch === "'") quote = '';
      else word += ch;
    } else if (quote === '"') {
      if (ch === '"') quote = '';
      else if (ch === '\\' && i + 1 < line.length && '"\\$'.includes(line[i + 1]!)) word += line[++i];
      else word += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      inWord = true;
    } else if (ch === '\\' && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) out.push(word);
      word = '';
      inWord = false;
    } else {
      word += ch;
      inWord = true;
    }
  }
  if (inWord) out.push(word);
  return out;
}

/** Whether a command line leaves a quote open. */
function openQuote(line: string): boolean {
  let quote = '';
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quote === "'") {
      if (ch === "'") quote = '';
    } else if (ch === '\\') i++;
    else if (quote === '"') {
      if (ch === '"') quote = '';
    } else if (ch === "'" || ch === '"') quote = ch;
  }
  return quote !== '';
}

const rows = (list: Row[]): Record<string, string> | undefined => {
  const out: Record<string, string> = {};
  for (const r of list) if (r.key.trim()) out[r.key.trim()] = r.value;
  return Object.keys(out).length ? out : undefined;
};

/** The request a custom server draft makes (for Save and Test connection). */
export function customRequest(d: CustomDraft): CustomServerInput {
  const name = d.name.trim();
  if (d.transport === 'stdio') {
    const [command = '', ...args] = splitCommand(d.command);
    return { name, transport: 'stdio', command, args: args.length ? args : undefined, env: rows(d.env) };
  }
  return { name, transport: d.transport, url: d.url.trim(), headers: d.oauth ? undefined : rows(d.headers), oauth: d.oauth || undefined };
}

const CREDENTIAL = /auth|token|key|secret|passw|cookie/i;

/** A header or env entry whose name says credential but whose value is typed in, not a ${VAR}. */
export const credentialLiteral = (r: Row): boolean => CREDENTIAL.test(r.key) && r.value.trim() !== '' && !r.value.includes('${');

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_|~-]+$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const VAR_REF = /\$\{([^}]*)\}/g;
const VAR_NAME = /^[A-Z][A-Z0-9_]*$/;

export type DraftErrors = Partial<Record<'name' | 'url' | 'command' | 'headers' | 'env', string>>;

/** What must change before the draft can be tested or saved, per field (empty when nothing). */
export function customErrors(d: CustomDraft): DraftErrors {
  const e: DraftErrors = {};
  if (!d.name.trim()) e.name = 'Name the server (it prefixes its tools).';
  else if (!customSlug(d.name)) e.name = 'Use at least one letter or digit in the name.';
  if (d.transport === 'stdio') {
    if (openQuote(d.command)) e.command = 'A quote is not closed.';
    else if (splitCommand(d.command).length === 0) e.command = 'Enter the command that starts the server, e.g. npx -y @scope/server.';
    const env = rowsError(d.env, (k) => ENV_NAME.test(k), 'Environment names are letters, digits and _.');
    if (env) e.env = env;
  } else {
    const url = d.url.trim();
    if (!url) e.url = 'Enter the server’s URL.';
    else if (!url.startsWith('${') && !/^https?:\/\/[^/\s]+/i.test(url)) e.url = 'Start the URL with https:// (or http:// for a server on this computer).';
    const headers = d.oauth ? '' : rowsError(d.headers, (k) => HEADER_NAME.test(k), 'Header names are letters, digits and - (no spaces).');
    if (headers) e.headers = headers;
  }
  const bad = badReferences(d);
  if (bad.length) {
    const field = d.transport === 'stdio' ? 'env' : d.oauth ? 'url' : 'headers';
    e[field] ??= `\${${bad[0]}}: variable names are UPPER_CASE letters, digits and _.`;
  }
  return e;
}

function rowsError(list: Row[], valid: (k: string) => boolean, message: string): string {
  const seen = new Set<string>();
  for (const r of list) {
    const k = r.key.trim();
    if (!k) {
      if (r.value.trim()) return 'Give every value a name.';
      continue;
    }
    if (!valid(k)) return message;
    if (seen.has(k)) return `${k} appears twice.`;
    seen.add(k);
    if (credentialLiteral(r)) return `${k} looks like a credential: store it in a workspace variable and write \${NAME} here.`;
  }
  return '';
}

/** The strings of a draft that may hold ${VAR}, for the transport it uses. */
function draftStrings(d: CustomDraft): string[] {
  if (d.transport === 'stdio') return [d.command, ...d.env.map((r) => r.value)];
  return [d.url, ...(d.oauth ? [] : d.headers.map((r) => r.value))];
}

function allReferences(d: CustomDraft): string[] {
  const names = new Set<string>();
  for (const s of draftStrings(d)) for (const m of s.replace(/\$\$\{/g, '').matchAll(VAR_REF)) names.add(m[1]!);
  return [...names];
}

const badReferences = (d: CustomDraft) => allReferences(d).filter((n) => !VAR_NAME.test(n));

/** The workspace variables a draft uses, sorted. */
export const draftVariables = (d: CustomDraft): string[] => allReferences(d).filter((n) => VAR_NAME.test(n)).sort();

/** The tool prefix a custom server gets from its name (as the server makes it): "My Notes!" → my_notes. */
export function customSlug(name: string): string {
  let s = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  if (!s) return '';
  if (s[0]! < 'a' || s[0]! > 'z') s = `mcp_${s}`;
  if (s.length > 24) s = s.slice(0, 24).replace(/_+$/, '');
  return s;
}

/** The workspace variable a setup form's secret field is stored in (as the server names it). */
export function secretVariable(connector: string, field: string): string {
  const base = connector.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_+|_+$/g, '');
  let name = `${base}_${field}`.replace(/^_+|_+$/g, '').toUpperCase();
  if (!/^[A-Z]/.test(name)) name = `C_${name}`;
  return name.slice(0, 64);
}
