// Settings → API keys: what to paste into Claude Code, Codex, Gemini CLI, Cursor or curl (pure).

/** An API key of the workspace's MCP endpoint; the key itself is only in CreatedApiKey. */
export type ApiKey = {
  id: string;
  name: string;
  /** The key's first characters, e.g. "rrk_ab12cd". */
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  /** Which MCP tools its client is offered: all 45, or the 28 core ones for clients with small tool limits. */
  tool_set: 'full' | 'compact';
};

export type CreatedApiKey = { key: string; record: ApiKey };

/** Where `rerun` listens when the page does not say (the desktop window is wails://…). */
export const FALLBACK_ORIGIN = 'http://127.0.0.1:7777';

/** Stands in for a key the page does not know (it is shown once, at creation). */
export const KEY_PLACEHOLDER = 'rrk_…';

/** The origin an outside app reaches this Rerun at: the page's own when it is http(s), else the default. */
export function mcpOrigin(origin: string | null | undefined): string {
  if (!origin || !/^https?:\/\/[^/]+$/i.test(origin)) return FALLBACK_ORIGIN;
  let host: string;
  try {
    host = new URL(origin).hostname;
  } catch {
    return FALLBACK_ORIGIN;
  }
  // Wails serves its window from a made-up host on some platforms.
  if (host === 'wails' || host === 'wails.localhost') return FALLBACK_ORIGIN;
  return origin.replace(/\/+$/, '');
}

/** The MCP endpoint's URL. */
export function mcpEndpoint(origin: string | null | undefined): string {
  return `${mcpOrigin(origin)}/api/mcp/account`;
}

/** The environment variable every snippet reads the key from, so it never lands in a config file. */
export const KEY_ENV = 'RERUN_KEY';

/** The line that puts the key in the environment (for your shell profile). */
export function keyExport(key?: string): string {
  return `export ${KEY_ENV}=${key?.trim() || KEY_PLACEHOLDER}`;
}

/**
 * Claude Code, for every folder (user scope). The single quotes keep `${RERUN_KEY}`
 * unexpanded: Claude Code reads the variable each time it starts.
 */
export function claudeCommand(origin: string | null | undefined): string {
  return `claude mcp add --scope user --transport http rerun ${mcpEndpoint(origin)} --header 'Authorization: Bearer \${${KEY_ENV}}'`;
}

/** Scripted Claude Code needs Rerun's tools allowed up front. */
export const CLAUDE_SCRIPTED = `claude -p "List my Rerun agents" --allowedTools "mcp__rerun__*"`;

/** Codex's ~/.codex/config.toml section. */
export function codexConfig(origin: string | null | undefined): string {
  return ['[mcp_servers.rerun]', `url = ${JSON.stringify(mcpEndpoint(origin))}`, `bearer_token_env_var = "${KEY_ENV}"`].join('\n');
}

/** Gemini CLI's ~/.gemini/settings.json with Rerun in it (it expands $RERUN_KEY). */
export function geminiConfig(origin: string | null | undefined): string {
  const q = JSON.stringify;
  return [
    '{',
    '  "mcpServers": {',
    '    "rerun": {',
    `      "httpUrl": ${q(mcpEndpoint(origin))},`,
    `      "headers": { "Authorization": ${q(`Bearer $${KEY_ENV}`)} }`,
    '    }',
    '  }',
    '}',
  ].join('\n');
}

/** Cursor's ~/.cursor/mcp.json with Rerun in it (valid JSON, the headers kept on one line). */
export function cursorConfig(origin: string | null | undefined): string {
  const q = JSON.stringify;
  return [
    '{',
    '  "mcpServers": {',
    '    "rerun": {',
    `      "url": ${q(mcpEndpoint(origin))},`,
    `      "headers": { "Authorization": ${q(`Bearer \${env:${KEY_ENV}}`)} }`,
    '    }',
    '  }',
    '}',
  ].join('\n');
}

/** One JSON-RPC call with curl: no session, no initialize. */
export function curlCommand(origin: string | null | undefined): string {
  return (
    `curl -s ${mcpEndpoint(origin)} -H "Authorization: Bearer $${KEY_ENV}" -H 'Content-Type: application/json' ` +
    `-d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_agents","arguments":{}}}'`
  );
}

/** A copy-ready setup for one client. */
export type Snippet = { id: string; title: string; where: string; lang: 'shell' | 'json' | 'toml'; text: string; note?: string };

/** Every client's setup, pointing at the endpoint of origin. */
export function snippets(origin: string | null | undefined): Snippet[] {
  return [
    {
      id: 'claude',
      title: 'Claude Code',
      where: 'run in a terminal',
      lang: 'shell',
      text: claudeCommand(origin),
      note: `In scripts allow Rerun's tools: ${CLAUDE_SCRIPTED}`,
    },
    { id: 'codex', title: 'Codex', where: '~/.codex/config.toml', lang: 'toml', text: codexConfig(origin) },
    {
      id: 'gemini',
      title: 'Gemini CLI',
      where: '~/.gemini/settings.json',
      lang: 'json',
      text: geminiConfig(origin),
      note: 'Gemini CLI starts MCP servers only in folders you trust (it asks the first time).',
    },
    {
      id: 'cursor',
      title: 'Cursor',
      where: '~/.cursor/mcp.json',
      lang: 'json',
      text: cursorConfig(origin),
      note: 'Cursor handles about 40 tools in all: give its key the compact tool set.',
    },
    { id: 'curl', title: 'curl', where: 'one call, no session', lang: 'shell', text: curlCommand(origin) },
  ];
}

/** What the compact switch of a key says. */
export function toolSetLabel(set: string | undefined): string {
  return set === 'compact' ? 'Compact tool set: 28 core tools' : 'All 45 tools';
}

/** "rrk_ab12cd…": the part of a key Rerun keeps, so a person can tell keys apart. */
export function shownPrefix(prefix: string): string {
  return `${prefix}…`;
}

/** "today 14:05", "yesterday 09:10" or "3 Mar 2025"; `never` for no date. */
export function keyDate(iso: string | null, never = 'never', now = new Date()): string {
  if (!iso) return never;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return never;
  const time = d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  if (d.toDateString() === now.toDateString()) return `today ${time}`;
  const y = new Date(now);
  y.setDate(now.getDate() - 1);
  if (d.toDateString() === y.toDateString()) return `yesterday ${time}`;
  return d.toLocaleDateString([], { day: 'numeric', month: 'short', year: 'numeric' });
}
