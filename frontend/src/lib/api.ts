// The one client of the local HTTP API. Components never call fetch themselves.
import type { ApiKey, CreatedApiKey } from './apikeys';
import type {
  Fire,
  Schedule,
  ScheduleInput,
  SchedulePreview,
  SchedulePreviewInput,
  Trigger,
  TriggerDelivery,
  TriggerInput,
  TriggerWithUrl,
} from './automations';
import type { Budget, BudgetLimits } from './budgets';
import type { DayUsage } from './chart';
import type { Memory, MemoryQuery, Remembered } from './memory';
import type { ModelsInfo, ProviderSetting } from './models';
import type { Delivery, Notification, NotificationQuery } from './notificationtypes';
import type { EmailSettings, NotificationHook, OutboxDelivery, SendTest } from './outboxform';
import type { Pause, PauseQuery, PauseReply } from './pausetypes';
import type { Run, RunDetail, Session, Transcript } from './runs';
import type { Skill, SkillSummary, SkillVersion } from './skillmd';
import type { Variable, Variables } from './variables';
import type {
  Agent,
  AgentPatch,
  Board,
  Boot,
  Box,
  Capability,
  NewAgent,
  SoulVersion,
  Workspace,
  WorkspaceList,
} from './workspace';
import type { BrowserNav, BrowserState } from './desktop';
import type { AppCatalog, Connector, CustomServerInput, InstalledApp, TriedServer } from './apps';
import type { ConnectorRequest } from './pausetypes';
import type { Preferences, UpdateChecks, WhenClosed } from './autostart';
import type { NewTemplate, Template, TemplateInstall, TemplatePatch, TemplatePreview } from './templates';
import type { DeadLetter, RelayLinkRequest, RelayStatus } from './relay';
import type { BackupSchedule, FolderBackup } from './backups';
import type { Phone, PhoneInvite } from './phone';
import type { BrainPage, BrainPageInput, BrainSummary, BrainVersion } from './brain';
import type { Onboarding } from './onboarding';
import type { Autostart } from './autostart';
import type { RunSummary } from './runs';
import type { VariableSync } from './variables';
import type { AppInfo, DownloadedUpdate, LastUpdate, UpdateStatus } from './about';
import { searchParams, type DiskUsage, type Retention, type SearchQuery, type SearchResult } from './search';
import type { Marks } from './painted';

/** An error the API answered (status > 0) or a failure to reach it (status 0). */
export class ApiError extends Error {
  readonly status: number;
  /** What the app can do about it, e.g. credential_like (see confirmCredentialLike). */
  readonly code: string;
  constructor(status: number, message: string, code = '') {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

/**
 * Asks the person whether text the server refused as credential-like is no
 * secret (an example key from the docs, say). On yes the request is sent again
 * with allow_credential_like=true; a variable's value is refused still.
 * Replaceable for tests.
 */
export const credentialPrompt = {
  confirm: (message: string): boolean =>
    window.confirm(`${message}\n\nIf this is not a real secret (an example, a placeholder), save it anyway?`),
};

/** The message to show a person for anything thrown by an API call. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

const unauthorized = new Set<() => void>();

/** Calls fn whenever an API call answers 401 (this page holds no valid token). Returns the unsubscribe. */
export function onUnauthorized(fn: () => void): () => void {
  unauthorized.add(fn);
  return () => unauthorized.delete(fn);
}

/** A body sent as it is (not as JSON), e.g. an uploaded file. */
class RawBody {
  constructor(
    readonly data: Blob | ArrayBuffer,
    readonly type: string,
  ) {}
}

/**
 * The first board's request (GET /api/boot), which index.html sends before
 * this script has loaded (window.__rerunEarly, by path): a GET of it takes
 * its answer, once. endEarly drops what is left once the board is in, so no
 * later read gets an old answer.
 */
type Early = Record<string, Promise<Response> | undefined>;
function early(path: string): Promise<Response> | undefined {
  const all = (globalThis as { __rerunEarly?: Early }).__rerunEarly;
  const res = all?.[path];
  if (all && res) delete all[path];
  return res;
}

/** Forgets index.html's early requests not taken (see early). */
export function endEarly(): void {
  delete (globalThis as { __rerunEarly?: Early }).__rerunEarly;
}

async function request<T>(method: Method, path: string, body?: unknown): Promise<T> {
  const init: RequestInit = {
    method,
    credentials: 'same-origin',
    headers: { Accept: 'application/json' },
  };
  if (body instanceof RawBody) {
    init.headers = { Accept: 'application/json', 'Content-Type': body.type };
    init.body = body.data;
  } else if (body !== undefined) {
    init.headers = { Accept: 'application/json', 'Content-Type': 'application/json' };
    init.body = JSON.stringify(body);
  }
  let res: Response;
  try {
    res = await ((method === 'GET' && body === undefined && early(path)) || fetch(path, init));
  } catch (err) {
    throw new ApiError(0, `Cannot reach Rerun (${errorMessage(err)}). Is it still running?`);
  }
  if (res.status === 401) for (const fn of unauthorized) fn();
  if (!res.ok) {
    const { message, code } = await readError(res);
    if (code === 'credential_like' && !path.includes('allow_credential_like=') && credentialPrompt.confirm(message)) {
      return request<T>(method, path + (path.includes('?') ? '&' : '?') + 'allow_credential_like=true', body);
    }
    throw new ApiError(res.status, message, code);
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  if (text === '') return undefined as T;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new ApiError(res.status, `Rerun answered ${method} ${path} with something that is not JSON.`);
  }
}

/** The message and code of an error answer. */
async function readError(res: Response): Promise<{ message: string; code: string }> {
  let text = '';
  try {
    text = await res.text();
  } catch {
    // fall through to the status line
  }
  if (text) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === 'object' && 'error' in parsed) {
        const { error: msg, code } = parsed as { error: unknown; code?: unknown };
        if (typeof msg === 'string' && msg !== '') return { message: msg, code: typeof code === 'string' ? code : '' };
      }
    } catch {
      if (text.length < 300) return { message: text.trim(), code: '' };
    }
  }
  if (res.status === 401) return { message: 'This window is no longer signed in to Rerun. Open it again from the app.', code: '' };
  return { message: `Request failed (${res.status}${res.statusText ? ' ' + res.statusText : ''}).`, code: '' };
}

const seg = encodeURIComponent;
const ws = (id: string) => `/api/workspaces/${seg(id)}`;
const agentPath = (wsId: string, agentId: string) => `${ws(wsId)}/agents/${seg(agentId)}`;
const schedulePath = (wsId: string, id: string) => `${ws(wsId)}/schedules/${seg(id)}`;
const triggerPath = (wsId: string, id: string) => `${ws(wsId)}/triggers/${seg(id)}`;
const appPath = (wsId: string, id: string) => `${ws(wsId)}/apps/${seg(id)}`;
const skillPath = (wsId: string, agentId: string, name: string) => `${agentPath(wsId, agentId)}/skills/${seg(name)}`;
const templatePath = (wsId: string, id: string) => `${ws(wsId)}/templates/${seg(id)}`;

/** "?a=1&b=2" from the set values, or ''. */
function query(params: Record<string, string | number | boolean | undefined>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === '' || v === false) continue;
    p.set(k, v === true ? '1' : String(v));
  }
  const s = p.toString();
  return s ? `?${s}` : '';
}

const memoryQuery = (q: MemoryQuery) => query({ q: q.q?.trim(), retired: q.retired, limit: q.limit || undefined });

export const api = {
  listWorkspaces: () => request<WorkspaceList>('GET', '/api/workspaces'),
  /** The workspaces, the capabilities and the current board: what the first paint needs (index.html asks early). */
  boot: () => request<Boot>('GET', '/api/boot'),
  createWorkspace: (name: string) => request<Workspace>('POST', '/api/workspaces', { name }),
  renameWorkspace: (id: string, name: string) => request<Workspace>('PATCH', ws(id), { name }),
  switchWorkspace: (id: string) => request<{ current: string }>('POST', `${ws(id)}/switch`),
  /** Settings → Backups: one encrypted backup file into folder, keeping the newest `keep` (0: all). */
  backupWorkspace: (id: string, folder: string, passphrase: string, keep: number) =>
    request<FolderBackup>('POST', `${ws(id)}/backups`, { folder, passphrase, keep }),
  getBackupSchedule: (id: string) => request<BackupSchedule>('GET', `${ws(id)}/backups/schedule`),
  /** Daily backups into folder; passphrase '' keeps the one kept. */
  setBackupSchedule: (id: string, s: { enabled: boolean; folder: string; keep: number; passphrase: string }) =>
    request<BackupSchedule>('PUT', `${ws(id)}/backups/schedule`, s),
  lastBackup: (id: string) => request<{ last: FolderBackup | null }>('GET', `${ws(id)}/backups/last`),
  /** Checks the backup file in full, then adds it as a new workspace. */
  restoreWorkspace: (path: string, passphrase: string, name: string) =>
    request<Workspace>('POST', '/api/workspaces/restore', { path, passphrase, name }),
  /** Deletes a workspace for good; confirm is its name, typed. */
  deleteWorkspace: (id: string, confirm: string) => request<{ current: string }>('POST', `${ws(id)}/delete`, { confirm }),

  getBoard: (wsId: string) => request<Board>('GET', `${ws(wsId)}/board`),

  createBox: (wsId: string, name: string) => request<Box>('POST', `${ws(wsId)}/boxes`, { name }),
  renameBox: (wsId: string, id: string, name: string) =>
    request<Box>('PATCH', `${ws(wsId)}/boxes/${seg(id)}`, { name }),
  reorderBoxes: (wsId: string, ids: string[]) => request<Box[]>('PUT', `${ws(wsId)}/boxes/order`, { ids }),
  deleteBox: (wsId: string, id: string) => request<void>('DELETE', `${ws(wsId)}/boxes/${seg(id)}`),

  createAgent: (wsId: string, agent: NewAgent) => request<Agent>('POST', `${ws(wsId)}/agents`, agent),
  getAgent: (wsId: string, id: string) => request<Agent>('GET', `${ws(wsId)}/agents/${seg(id)}`),
  updateAgent: (wsId: string, id: string, patch: AgentPatch) =>
    request<Agent>('PATCH', `${ws(wsId)}/agents/${seg(id)}`, patch),
  deleteAgent: (wsId: string, id: string) => request<void>('DELETE', `${ws(wsId)}/agents/${seg(id)}`),
  listSouls: (wsId: string, id: string) => request<SoulVersion[]>('GET', `${ws(wsId)}/agents/${seg(id)}/souls`),

  deriveHandle: (name: string, wsId: string) =>
    request<{ handle: string }>('GET', `/api/handle?${new URLSearchParams({ name, ws: wsId })}`),
  listCapabilities: () => request<Capability[]>('GET', '/api/capabilities'),
  /** Whether agents' commands run sandboxed on this computer. */
  getSandbox: () => request<{ sandboxed: boolean; detail: string }>('GET', '/api/sandbox'),

  sendMessage: (wsId: string, agentId: string, text: string, sessionId?: string) =>
    request<Run>('POST', `${ws(wsId)}/agents/${seg(agentId)}/messages`, { text, session_id: sessionId || undefined }),
  listSessions: (wsId: string, agentId: string) => request<Session[]>('GET', `${ws(wsId)}/agents/${seg(agentId)}/sessions`),
  createSession: (wsId: string, agentId: string) => request<Session>('POST', `${ws(wsId)}/agents/${seg(agentId)}/sessions`, {}),
  getTranscript: (wsId: string, sessionId: string) => request<Transcript>('GET', `${ws(wsId)}/sessions/${seg(sessionId)}`),
  updateSession: (wsId: string, sessionId: string, patch: { provider?: string; model?: string; title?: string }) =>
    request<Session>('PATCH', `${ws(wsId)}/sessions/${seg(sessionId)}`, patch),
  listRuns: (wsId: string, agentId: string, limit = 100) =>
    request<Run[]>('GET', `${ws(wsId)}/agents/${seg(agentId)}/runs?limit=${limit}`),
  /** The workspace's spend limits and its spend per day. */
  workspaceBudget: (wsId: string, days = 30) => request<Budget>('GET', `${ws(wsId)}/budget?days=${days}`),
  /** Changes the limits given; 0 clears one. */
  setWorkspaceBudget: (wsId: string, patch: Partial<BudgetLimits>) => request<BudgetLimits>('PATCH', `${ws(wsId)}/budget`, patch),
  agentBudget: (wsId: string, agentId: string, days = 30) => request<Budget>('GET', `${ws(wsId)}/agents/${seg(agentId)}/budget?days=${days}`),
  setAgentBudget: (wsId: string, agentId: string, patch: Partial<BudgetLimits>) =>
    request<BudgetLimits>('PATCH', `${ws(wsId)}/agents/${seg(agentId)}/budget`, patch),
  usage: (wsId: string, agentId: string, days = 30) =>
    request<DayUsage[]>('GET', `${ws(wsId)}/agents/${seg(agentId)}/usage?days=${days}`),
  /** Summaries of the agent's runs on the workspace's other devices (read-only). */
  runsElsewhere: (wsId: string, agentId: string, limit = 50) =>
    request<RunSummary[]>('GET', `${ws(wsId)}/agents/${seg(agentId)}/runs/elsewhere?limit=${limit}`),
  getRun: (wsId: string, runId: string) => request<RunDetail>('GET', `${ws(wsId)}/runs/${seg(runId)}`),
  cancelRun: (wsId: string, runId: string) => request<Run>('POST', `${ws(wsId)}/runs/${seg(runId)}/cancel`),
  /** A pinned run is kept however old it gets. */
  pinRun: (wsId: string, runId: string, pinned: boolean) =>
    request<{ pinned: boolean }>('PUT', `${ws(wsId)}/runs/${seg(runId)}/pin`, { pinned }),
  /** Full-text search over runs' steps and notifications, newest first; page with `before`. */
  search: (wsId: string, q: SearchQuery) => request<SearchResult>('GET', `${ws(wsId)}/search${searchParams(q)}`),
  getRetention: (wsId: string) => request<Retention>('GET', `${ws(wsId)}/retention`),
  setRetention: (wsId: string, r: Retention) => request<Retention>('PUT', `${ws(wsId)}/retention`, r),
  /** Bytes on disk, per coworker and for the workspace. */
  diskUsage: (wsId: string) => request<DiskUsage>('GET', `${ws(wsId)}/disk`),

  listModels: () => request<ModelsInfo>('GET', '/api/models'),
  modelSettings: () => request<ProviderSetting[]>('GET', '/api/settings/models'),
  saveModelSetting: (provider: string, body: { api_key?: string; base_url?: string }) =>
    request<ProviderSetting[]>('PUT', `/api/settings/models/${seg(provider)}`, body),
  forgetModelSetting: (provider: string) => request<ProviderSetting[]>('DELETE', `/api/settings/models/${seg(provider)}`),

  /** The server's own address (the desktop window cannot see it), the build (version, commit, date) and the data folder. */
  info: () => request<AppInfo>('GET', '/api/info'),
  /** Once per page: the board has painted (logged by the server; make bench times launches by it). */
  painted: (pageMs: number, marks: Marks) => request<void>('POST', '/api/ui/painted', { page_ms: pageMs, ...marks }),
  /** "Check for updates": the release feed, verified by the server (and remembered); installs nothing. */
  checkUpdate: () => request<UpdateStatus>('GET', '/api/update'),
  /** What the last check found, daily or clicked, without the network. */
  lastUpdate: () => request<LastUpdate>('GET', '/api/update/last'),
  /** "Download and verify": the server fetches the package and keeps it only if the release key signed it. */
  downloadUpdate: () => request<DownloadedUpdate>('POST', '/api/update/download'),
  /** "Open installer": hands the verified package to the system, which asks before installing. */
  openUpdate: () => request<DownloadedUpdate>('POST', '/api/update/open'),
  listKeys: (wsId: string) => request<ApiKey[]>('GET', `${ws(wsId)}/keys`),
  createKey: (wsId: string, name: string) => request<CreatedApiKey>('POST', `${ws(wsId)}/keys`, { name }),
  setKeyToolSet: (wsId: string, id: string, toolSet: 'full' | 'compact') =>
    request<ApiKey>('PATCH', `${ws(wsId)}/keys/${seg(id)}`, { tool_set: toolSet }),
  revokeKey: (wsId: string, id: string) => request<ApiKey>('DELETE', `${ws(wsId)}/keys/${seg(id)}`),

  listMemories: (wsId: string, agentId: string, q: MemoryQuery = {}) =>
    request<Memory[]>('GET', `${agentPath(wsId, agentId)}/memories${memoryQuery(q)}`),
  addMemory: (wsId: string, agentId: string, text: string, supersedes?: string) =>
    request<Remembered>('POST', `${agentPath(wsId, agentId)}/memories`, { text, supersedes: supersedes || undefined }),
  updateMemory: (wsId: string, id: string, text: string) =>
    request<Memory>('PATCH', `${ws(wsId)}/memories/${seg(id)}`, { text }),
  deleteMemory: (wsId: string, id: string) => request<void>('DELETE', `${ws(wsId)}/memories/${seg(id)}`),
  /** "Useful": the person says a memory helped; it is reinforced as a run's use would. */
  markMemoryUseful: (wsId: string, id: string) => request<Memory>('POST', `${ws(wsId)}/memories/${seg(id)}/useful`),

  listSkills: (wsId: string, agentId: string) => request<SkillSummary[]>('GET', `${agentPath(wsId, agentId)}/skills`),
  getSkill: (wsId: string, agentId: string, name: string) => request<Skill>('GET', skillPath(wsId, agentId, name)),
  skillVersions: (wsId: string, agentId: string, name: string) =>
    request<SkillVersion[]>('GET', `${skillPath(wsId, agentId, name)}/versions`),
  /** Creates or replaces a skill; skillMd is the whole SKILL.md and must carry this name. */
  /** create: a new skill; the server refuses (409) when the name is taken instead of overwriting. */
  saveSkill: (wsId: string, agentId: string, name: string, skillMd: string, opts: { create?: boolean } = {}) =>
    request<Skill>('PUT', skillPath(wsId, agentId, name) + (opts.create ? '?new=1' : ''), { skill_md: skillMd }),
  deleteSkill: (wsId: string, agentId: string, name: string) => request<void>('DELETE', skillPath(wsId, agentId, name)),
  /** Installs a skill from a .zip of its folder (the file itself is the body). */
  importSkill: (wsId: string, agentId: string, zip: Blob | ArrayBuffer) =>
    request<Skill>('POST', `${agentPath(wsId, agentId)}/skills/import`, new RawBody(zip, 'application/zip')),
  /** Where the browser downloads a skill as .zip (same-origin, the cookie signs it). */
  skillExportUrl: (wsId: string, agentId: string, name: string) => `${skillPath(wsId, agentId, name)}/export`,

  listPauses: (wsId: string, q: PauseQuery = {}) =>
    request<Pause[]>('GET', `${ws(wsId)}/pauses${query({ agent_id: q.agent_id, status: q.status })}`),
  getPause: (wsId: string, id: string) => request<Pause>('GET', `${ws(wsId)}/pauses/${seg(id)}`),
  /** Answers an open pause (or dismisses it); the run continues from the answer. */
  answerPause: (wsId: string, id: string, reply: PauseReply) =>
    request<Pause>('POST', `${ws(wsId)}/pauses/${seg(id)}/answer`, reply),

  getBrowser: (wsId: string, agentId: string) => request<BrowserState>('GET', `${agentPath(wsId, agentId)}/browser`),
  /** Opens the agent's browser when it has none running (on url, or a blank page). */
  startBrowser: (wsId: string, agentId: string, url?: string) =>
    request<BrowserState>('POST', `${agentPath(wsId, agentId)}/browser/start`, url ? { url } : {}),
  /** The person holds the browser: the agent's browser tools wait until the hand-back. */
  takeOverBrowser: (wsId: string, agentId: string) => request<BrowserState>('POST', `${agentPath(wsId, agentId)}/browser/take-over`),
  /** Gives the browser back to the agent; answers its open takeover card. */
  handBackBrowser: (wsId: string, agentId: string) => request<BrowserState>('POST', `${agentPath(wsId, agentId)}/browser/hand-back`),
  /** The address bar, while the person holds the browser: go to a typed address (a bare host as https://), back, forward, reload. */
  navigateBrowser: (wsId: string, agentId: string, nav: BrowserNav) =>
    request<BrowserState>('POST', `${agentPath(wsId, agentId)}/browser/navigate`, nav),
  /** The path of the screen WebSocket (frames and input); lib/desktop.svelte.ts makes its address. */
  browserScreenPath: (wsId: string, agentId: string) => `${agentPath(wsId, agentId)}/browser/screen`,
  /** Pop out from the desktop window: the person's default browser opens that agent's Desktop alone (409 in rerun serve). */
  openDesktopWindow: (wsId: string, agentId: string) => request<void>('POST', '/api/ui/open-desktop', { workspace: wsId, agent: agentId }),
  /** The system's folder dialog (desktop window only); path is '' when cancelled. */
  pickFolder: (title: string, start: string) => request<{ path: string }>('POST', '/api/ui/pick-folder', { title, start }),

  listNotifications: (wsId: string, q: NotificationQuery = {}) =>
    request<Notification[]>('GET', `${ws(wsId)}/notifications${query({ agent_id: q.agent_id, open: q.open, limit: q.limit })}`),
  getNotification: (wsId: string, id: string) => request<Notification>('GET', `${ws(wsId)}/notifications/${seg(id)}`),
  dismissNotification: (wsId: string, id: string) =>
    request<Notification>('POST', `${ws(wsId)}/notifications/${seg(id)}/dismiss`),
  /** Dismisses every open notification not raised by a pause (of one agent when given). */
  dismissAllNotifications: (wsId: string, agentId?: string) =>
    request<{ dismissed: number }>('POST', `${ws(wsId)}/notifications/dismiss`, agentId ? { agent_id: agentId } : {}),
  getDelivery: (wsId: string) => request<Delivery>('GET', `${ws(wsId)}/settings/notifications`),
  saveDelivery: (wsId: string, delivery: Delivery) => request<Delivery>('PUT', `${ws(wsId)}/settings/notifications`, delivery),
  getEmail: (wsId: string) => request<EmailSettings>('GET', `${ws(wsId)}/settings/notifications/email`),
  saveEmail: (wsId: string, e: EmailSettings) => request<EmailSettings>('PUT', `${ws(wsId)}/settings/notifications/email`, e),
  /** Sends a test mail with these settings now; answer is the server's own words when it refused. */
  testEmail: (wsId: string, e: EmailSettings) => request<SendTest>('POST', `${ws(wsId)}/settings/notifications/email/test`, e),
  getHooks: (wsId: string) => request<NotificationHook[]>('GET', `${ws(wsId)}/settings/notifications/hooks`),
  saveHooks: (wsId: string, hooks: NotificationHook[]) => request<NotificationHook[]>('PUT', `${ws(wsId)}/settings/notifications/hooks`, hooks),
  testHook: (wsId: string, h: NotificationHook) => request<SendTest>('POST', `${ws(wsId)}/settings/notifications/hooks/test`, h),
  /** Mails and hook POSTs; problems: only failed ones and those waiting for a retry. */
  listDeliveries: (wsId: string, q: { notification_id?: string; problems?: boolean } = {}) =>
    request<OutboxDelivery[]>('GET', `${ws(wsId)}/notifications/deliveries${query({ notification_id: q.notification_id, problems: q.problems })}`),
  retryDelivery: (wsId: string, id: string) => request<void>('POST', `${ws(wsId)}/notifications/deliveries/${seg(id)}/retry`),

  listVariables: (wsId: string) => request<Variables>('GET', `${ws(wsId)}/variables`),
  /** Adds a variable or replaces its value (hosts given: also where it may be sent); the value never comes back. */
  setVariable: (wsId: string, name: string, value: string, hosts?: string[]) =>
    request<Variable>('PUT', `${ws(wsId)}/variables/${seg(name)}`, hosts ? { value, hosts } : { value }),
  /** Sets the hosts a variable's value may be sent to ([]: any host), keeping the value. */
  setVariableHosts: (wsId: string, name: string, hosts: string[]) =>
    request<Variable>('PUT', `${ws(wsId)}/variables/${seg(name)}`, { hosts }),
  deleteVariable: (wsId: string, name: string) => request<void>('DELETE', `${ws(wsId)}/variables/${seg(name)}`),
  getVariableSync: (wsId: string) => request<VariableSync>('GET', `${ws(wsId)}/settings/variable-sync`),
  setVariableSync: (wsId: string, enabled: boolean) => request<VariableSync>('PUT', `${ws(wsId)}/settings/variable-sync`, { enabled }),
  getAutostart: () => request<Autostart>('GET', '/api/autostart'),
  setAutostart: (enabled: boolean) => request<Autostart>('PUT', '/api/autostart', { enabled }),
  getPreferences: () => request<Preferences>('GET', '/api/preferences'),
  setWhenClosed: (when_closed: WhenClosed) => request<Preferences>('PUT', '/api/preferences', { when_closed }),
  /** '' the registry Rerun started with, 'off' none, or a registry's base URL (the server checks it). */
  setMcpRegistry: (mcp_registry: string) => request<Preferences>('PUT', '/api/preferences', { mcp_registry }),
  setUpdateChecks: (update_checks: UpdateChecks) => request<Preferences>('PUT', '/api/preferences', { update_checks }),
  getHold: (wsId: string) => request<{ held: boolean }>('GET', `${ws(wsId)}/hold`),
  setHold: (wsId: string, held: boolean) => request<{ held: boolean }>('PUT', `${ws(wsId)}/hold`, { held }),

  listSchedules: (wsId: string, agentId: string) => request<Schedule[]>('GET', `${agentPath(wsId, agentId)}/schedules`),
  createSchedule: (wsId: string, agentId: string, input: ScheduleInput) =>
    request<Schedule>('POST', `${agentPath(wsId, agentId)}/schedules`, input),
  updateSchedule: (wsId: string, id: string, patch: Partial<ScheduleInput>) =>
    request<Schedule>('PATCH', schedulePath(wsId, id), patch),
  deleteSchedule: (wsId: string, id: string) => request<void>('DELETE', schedulePath(wsId, id)),
  /** "Run now": fires at once in the schedule's session, recorded as manual. */
  runSchedule: (wsId: string, id: string) => request<Fire>('POST', `${schedulePath(wsId, id)}/run`),
  scheduleHistory: (wsId: string, id: string, limit = 50) =>
    request<Fire[]>('GET', `${schedulePath(wsId, id)}/history${query({ limit })}`),
  nextFires: (wsId: string, id: string, n = 5) => request<string[]>('GET', `${schedulePath(wsId, id)}/next${query({ n })}`),
  /** What a schedule being edited would do; 400 says what to fix. */
  previewSchedule: (input: SchedulePreviewInput) => request<SchedulePreview>('POST', '/api/schedules/preview', input),

  listTriggers: (wsId: string, agentId: string) => request<Trigger[]>('GET', `${agentPath(wsId, agentId)}/triggers`),
  /** The answer's url is the only time the whole URL is shown. */
  createTrigger: (wsId: string, agentId: string, input: TriggerInput) =>
    request<TriggerWithUrl>('POST', `${agentPath(wsId, agentId)}/triggers`, input),
  updateTrigger: (wsId: string, id: string, patch: Partial<TriggerInput>) =>
    request<Trigger>('PATCH', triggerPath(wsId, id), patch),
  deleteTrigger: (wsId: string, id: string) => request<void>('DELETE', triggerPath(wsId, id)),
  /** A new URL; the old one stops at once, or after graceSeconds. */
  rotateTrigger: (wsId: string, id: string, graceSeconds = 0) =>
    request<TriggerWithUrl>('POST', `${triggerPath(wsId, id)}/rotate`, { grace_seconds: graceSeconds }),
  testTrigger: (wsId: string, id: string, payload: string, contentType?: string) =>
    request<TriggerDelivery>('POST', `${triggerPath(wsId, id)}/test`, { payload, content_type: contentType || undefined }),
  triggerDeliveries: (wsId: string, id: string, limit = 50) =>
    request<TriggerDelivery[]>('GET', `${triggerPath(wsId, id)}/deliveries${query({ limit })}`),

  /** The app catalog, best matches first (all of it by name for an empty query), then the MCP Registry's matches. */
  searchApps: (wsId: string, q = '', limit = 100) => request<AppCatalog>('GET', `${ws(wsId)}/apps/catalog${query({ q: q.trim(), limit })}`),
  listApps: (wsId: string, agentId: string) => request<Connector[]>('GET', `${agentPath(wsId, agentId)}/apps`),
  /** Declares a catalog app on the agent; the form is what is left to fill (null: nothing). */
  installApp: (wsId: string, agentId: string, catalogId: string) =>
    request<InstalledApp>('POST', `${agentPath(wsId, agentId)}/apps`, { catalog_id: catalogId }),
  addCustomServer: (wsId: string, agentId: string, input: CustomServerInput) =>
    request<Connector | InstalledApp>('POST', `${agentPath(wsId, agentId)}/apps/custom`, input),
  /** "Test connection": connects without saving and lists the server's tools. */
  tryServer: (wsId: string, input: CustomServerInput) => request<TriedServer>('POST', `${ws(wsId)}/apps/try`, input),
  getApp: (wsId: string, id: string) => request<Connector>('GET', appPath(wsId, id)),
  appForm: (wsId: string, id: string) => request<ConnectorRequest>('GET', `${appPath(wsId, id)}/form`),
  /** Stores a filled setup form: secret values go into workspace variables. */
  signInApp: (wsId: string, id: string, values: Record<string, string>) =>
    request<Connector>('POST', `${appPath(wsId, id)}/sign-in`, { values }),
  /** The URL of the browser sign-in (OAuth). */
  startAppOAuth: (wsId: string, id: string) => request<{ url: string }>('POST', `${appPath(wsId, id)}/oauth`),
  /** Reconnects and lists the tools. */
  testApp: (wsId: string, id: string) => request<Connector>('POST', `${appPath(wsId, id)}/test`),
  /** Re-pins the server's current tool definitions. */
  approveApp: (wsId: string, id: string) => request<Connector>('POST', `${appPath(wsId, id)}/approve`),
  uninstallApp: (wsId: string, id: string) => request<void>('DELETE', appPath(wsId, id)),

  listTemplates: (wsId: string) => request<Template[]>('GET', `${ws(wsId)}/templates`),
  getTemplate: (wsId: string, id: string) => request<Template>('GET', templatePath(wsId, id)),
  /** A blank template, or one made from an agent (never its memories, variable values or tokens). */
  createTemplate: (wsId: string, input: NewTemplate) => request<Template>('POST', `${ws(wsId)}/templates`, input),
  /** What "Save as template" would put in and leave out. */
  templatePreview: (wsId: string, agentId: string) => request<TemplatePreview>('GET', `${agentPath(wsId, agentId)}/template-preview`),
  updateTemplate: (wsId: string, id: string, patch: TemplatePatch) => request<Template>('PATCH', templatePath(wsId, id), patch),
  deleteTemplate: (wsId: string, id: string) => request<void>('DELETE', templatePath(wsId, id)),
  /** Makes a coworker from the template (into boxId, or the first box); cards: what it will ask. */
  /** budget: the limits the installer accepts (all 0 for none); absent takes the template's suggestion. */
  installTemplate: (wsId: string, id: string, opts: { box_id?: string; name?: string; budget?: BudgetLimits } = {}) =>
    request<TemplateInstall>('POST', `${templatePath(wsId, id)}/install`, opts),
  /** Where the browser downloads the .rerun-template (same-origin, the cookie signs it). */
  templateExportUrl: (wsId: string, id: string) => `${templatePath(wsId, id)}/export`,
  /** A .rerun-agent download: the agent with its memories, soul history and skills, never variables. */
  agentExportUrl: (wsId: string, id: string) => `${ws(wsId)}/agents/${seg(id)}/export`,
  /** Adds the agent a .rerun-agent file holds (a new handle when its own is taken). */
  importAgent: (wsId: string, file: Blob | ArrayBuffer) =>
    request<Agent>('POST', `${ws(wsId)}/agents/import`, new RawBody(file, 'application/json')),
  /** Adds a template from a .rerun-template file (the file itself is the body); 400 says what is wrong. */
  importTemplate: (wsId: string, file: Blob | ArrayBuffer) =>
    request<Template>('POST', `${ws(wsId)}/templates/import`, new RawBody(file, 'application/zip')),

  listBrain: (wsId: string) => request<BrainSummary[]>('GET', `${ws(wsId)}/brain`),
  getBrainPage: (wsId: string, id: string) => request<BrainPage>('GET', `${ws(wsId)}/brain/${seg(id)}`),
  createBrainPage: (wsId: string, input: BrainPageInput) => request<BrainPage>('POST', `${ws(wsId)}/brain`, input),
  /** baseVersion: the version the editor loaded; 409 when the page moved on since (the message says what to do). */
  updateBrainPage: (wsId: string, id: string, baseVersion: number, patch: Partial<BrainPageInput>) =>
    request<BrainPage>('PATCH', `${ws(wsId)}/brain/${seg(id)}`, { ...patch, base_version: baseVersion }),
  deleteBrainPage: (wsId: string, id: string) => request<void>('DELETE', `${ws(wsId)}/brain/${seg(id)}`),
  brainVersions: (wsId: string, id: string) => request<BrainVersion[]>('GET', `${ws(wsId)}/brain/${seg(id)}/versions`),

  relayStatus: (wsId: string) => request<RelayStatus>('GET', `${ws(wsId)}/relay`),
  /** Links the workspace to a relay; its secret is kept sealed in the app, never answered. */
  linkRelay: (wsId: string, body: RelayLinkRequest) => request<RelayStatus>('POST', `${ws(wsId)}/relay`, body),
  /** force: forget the link here even when the relay cannot be reached. */
  unlinkRelay: (wsId: string, force = false) => request<void>('DELETE', `${ws(wsId)}/relay${force ? '?force=1' : ''}`),
  deadLetters: (wsId: string) => request<DeadLetter[]>('GET', `${ws(wsId)}/relay/dead-letters`),
  replayDeadLetter: (wsId: string, id: string) => request<void>('POST', `${ws(wsId)}/relay/dead-letters/${seg(id)}/replay`),
  dropDeadLetter: (wsId: string, id: string) => request<void>('DELETE', `${ws(wsId)}/relay/dead-letters/${seg(id)}`),
  /** A pairing code for another device: it grants access to the workspace. */
  /** A one-time link (and QR code) that pairs a phone through the relay; shown once. */
  pairPhone: (wsId: string) => request<PhoneInvite>('POST', `${ws(wsId)}/phone/pairing`),
  phones: (wsId: string) => request<Phone[]>('GET', `${ws(wsId)}/phone/devices`),
  removePhone: (wsId: string, id: string) => request<void>('DELETE', `${ws(wsId)}/phone/devices/${seg(id)}`),
  pairingCode: (wsId: string) => request<{ code: string }>('POST', `${ws(wsId)}/relay/pairing`),
  joinWorkspace: (code: string, name?: string) => request<Workspace>('POST', '/api/relay/join', { code, name }),
  /** Makes device the one that takes the webhooks and fires the schedules, on every device. */
  setAutomationsDevice: (wsId: string, deviceId: string) =>
    request<RelayStatus>('PUT', `${ws(wsId)}/relay/automations-device`, { device_id: deviceId }),

  onboarding: (wsId: string) => request<Onboarding>('GET', `${ws(wsId)}/onboarding`),
  /** Starts onboarding, resumes the stopped one, or runs it again after done or skipped. */
  startOnboarding: (wsId: string) => request<Onboarding>('POST', `${ws(wsId)}/onboarding/start`),
  /** Cancels the Foreman's run and its open card. */
  skipOnboarding: (wsId: string) => request<Onboarding>('POST', `${ws(wsId)}/onboarding/skip`),
};
