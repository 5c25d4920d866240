// Wire types of the local HTTP API (docs/http-api.md).

import type { PauseKinds } from './pauses';

export type Workspace = { id: string; name: string; created_at: string };

export type Box = { id: string; name: string; position: number; created_at: string };

export type Agent = {
  id: string;
  name: string;
  handle: string;
  box_id: string;
  soul: string;
  provider: string;
  model: string;
  capabilities: string[];
  /** Per tool family: show an approval card before its tools act; absent from older servers. */
  ask_first?: Record<string, boolean>;
  /** Whether its commands and local app servers may use the network; absent from older servers (on). */
  network?: boolean;
  /** Which built-in agent this is ('rerun'); '' or absent for the person's own. */
  builtin?: string;
  created_at: string;
  updated_at: string;
};

/** author: "person" (you), "agent" (the coworker itself), "api" (an MCP client) or "" (its first soul, or saved before authors were kept). */
export type SoulVersion = { version: number; body: string; author?: string; created_at: string };

export type Capability = { id: string; label: string; description: string };

export type Board = {
  workspace: Workspace;
  boxes: Box[];
  agents: Agent[];
  /** What each agent is doing; absent from older servers. */
  activity?: Record<string, Activity>;
  /** Notifications not handled yet (open pauses included); absent from older servers. */
  notifications_open?: number;
  /** All coworkers paused (Pause all, in the toolbar and the tray). */
  held?: boolean;
  /** Schedules and triggers per agent (the clock badge); absent from older servers. */
  automations?: Record<string, AutomationCounts>;
};

/** Schedules and triggers of one agent; the paused ones are counted apart too (absent: none paused). */
export type AutomationCounts = { schedules: number; triggers: number; schedules_paused?: number; triggers_paused?: number };

export type WorkspaceList = { workspaces: Workspace[]; current: string };

export type NewAgent = {
  name: string;
  box_id: string;
  handle?: string;
  soul?: string;
  provider?: string;
  model?: string;
  capabilities?: string[];
};

export type AgentPatch = Partial<
  Pick<Agent, 'name' | 'soul' | 'provider' | 'model' | 'capabilities' | 'box_id' | 'ask_first' | 'network'>
>;

export type ChangeKind =
  | 'workspace.created'
  | 'workspace.updated'
  | 'workspace.switched'
  | 'workspace.deleted'
  | 'box.created'
  | 'box.updated'
  | 'box.deleted'
  | 'boxes.reordered'
  | 'agent.created'
  | 'agent.updated'
  | 'agent.deleted'
  | 'run.created'
  | 'run.updated'
  | 'run.step'
  | 'memory.changed'
  | 'memory.reembed'
  | 'skill.changed'
  | 'pause.created'
  | 'pause.updated'
  | 'notification.created'
  | 'notification.updated'
  | 'variables.changed'
  | 'settings.changed'
  | 'schedule.created'
  | 'schedule.updated'
  | 'schedule.deleted'
  | 'schedule.fired'
  | 'trigger.created'
  | 'trigger.updated'
  | 'trigger.deleted'
  | 'trigger.delivery'
  | 'connector.created'
  | 'connector.updated'
  | 'connector.deleted'
  | 'browser.updated'
  | 'template.created'
  | 'template.updated'
  | 'template.deleted';

/** run.* events also name the run's agent and session; memory.reembed carries `text: "done/total"`. */
export type ChangeEvent = { workspace: string; kind: ChangeKind | string; id?: string; agent?: string; session?: string; text?: string };

/** Streamed model text of a run, before its `model` step is committed. */
export type DeltaEvent = { workspace: string; run: string; agent: string; session: string; text: string };

// ---- agent runtime ----

export type RunStatus = 'queued' | 'running' | 'paused' | 'done' | 'failed' | 'cancelled';
export type RunSource = 'chat' | 'agent' | 'api' | 'schedule' | 'trigger' | 'template';

/** A run that ended on another device of the workspace (device sync carries summaries, never logs). */
export type RunSummary = {
  id: string;
  agent_id: string;
  source: RunSource;
  status: RunStatus;
  input: string; // its first 500 characters
  output: string; // its first 2,000 characters
  error: string;
  model: string;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  cost_known: boolean;
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
  device: string;
  /** The name the device gave itself (its host name), when it arrived. */
  device_name?: string;
};

/** Settings → Variables: whether values sync to the other devices (end-to-end encrypted). */
export type VariableSync = { enabled: boolean };
/** Start at login (Settings → General): the entry written for this computer. */
export type Autostart = { enabled: boolean; available: boolean; path: string };
/** What closing the window does: hide it (the coworkers keep working) or quit. */
export type WhenClosed = 'background' | 'quit';
/** This computer's choices about the app; `window` says they apply (the desktop window, not `rerun serve`). */
export type Preferences = {
  when_closed: WhenClosed;
  window: boolean;
  /** The MCP registry the Apps catalog searches: '' the one Rerun started with, 'off' none, or a registry's https base URL. */
  mcp_registry: string;
  /** The registry searched now ('' when off). */
  mcp_registry_url: string;
};

/** waiting: open pauses (absent from older servers). */
export type Activity = { running: number; last_status: RunStatus | ''; waiting?: number };

export type Session = {
  id: string;
  agent_id: string;
  kind: RunSource;
  title: string;
  provider: string;
  model: string;
  created_at: string;
  updated_at: string;
};

export type Run = {
  id: string;
  agent_id: string;
  session_id: string;
  source: RunSource;
  parent_run_id: string;
  status: RunStatus;
  input: string;
  output: string;
  error: string;
  provider: string;
  model: string;
  steps: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd: number;
  cost_known: boolean;
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
  /** Kept forever by retention. */
  pinned?: boolean;
};

export type ToolCall = { id: string; name: string; input: unknown };

export type StepData =
  | { kind: 'input'; data: { text: string; from: string } }
  | {
      kind: 'model';
      data: { text: string; tool_calls?: ToolCall[] | null; stop_reason?: string; provider?: string; model?: string; cost_known?: boolean };
    }
  | { kind: 'tool_call'; data: ToolCall }
  | {
      kind: 'tool_result';
      data: { id: string; name: string; output: string; is_error: boolean; child_run_id?: string; decision?: Decision };
    }
  | { kind: 'error'; data: { message: string } }
  | { kind: 'cancel'; data: { reason: string } }
  | { kind: 'compact'; data: { summary: string } }
  | { kind: 'note'; data: { text: string } }
  | { kind: 'pause'; data: { pause_id: string; kind: PauseKind } }
  | { kind: 'resume'; data: { pause_id: string; status: PauseStatus } };

/** How a person decided an action held for approval. */
export type Decision = 'approved' | 'declined';

export type Step = StepData & {
  run_id: string;
  seq: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  started_at: string;
  ended_at: string;
};

export type RunDetail = Omit<Run, 'steps'> & { steps: Step[]; children?: Run[]; pauses?: Pause[] };

/** pause: the session's open pause, shown as a card above the message box. */
export type Transcript = { session: Session; runs: RunDetail[]; pause?: Pause | null };

export type DayUsage = { day: string; runs: number; input_tokens: number; output_tokens: number; cost_usd: number };

export type ModelProvider = { name: string; label: string; models: string[]; source: 'env' | 'app' | 'local' };
export type ModelsInfo = { providers: ModelProvider[]; default: { provider: string; model: string } };

export type ProviderSetting = {
  name: string;
  label: string;
  configured: boolean;
  source: '' | 'env' | 'app' | 'local';
  hint: string;
  base_url: string;
};

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

// ---- memory and skills ----

export type MemoryState = 'active' | 'retired' | 'superseded';

/** One remembered fact of an agent. An empty source: written by a person. */
export type Memory = {
  id: string;
  agent_id: string;
  text: string;
  source: { run_id?: string; step?: number };
  state: MemoryState;
  /** 0..1 now; retired below 0.05. */
  strength: number;
  recalls: number;
  supersedes?: string;
  superseded_by?: string;
  created_at: string;
  updated_at: string;
  last_recalled_at?: string;
};

/** What POST …/memories did: stored a new memory (maybe replacing one) or reinforced an existing one. */
export type Remembered = { memory: Memory; superseded?: Memory; reason?: string; existing?: boolean };

export type MemoryQuery = { q?: string; retired?: boolean; limit?: number };

/** error: the SKILL.md does not parse. */
export type SkillSummary = { name: string; description: string; error?: string };

export type Skill = { name: string; description: string; front_matter: string; body: string; files: string[] };

/** body: the whole SKILL.md of that version. */
export type SkillVersion = { version: number; body: string; created_at: string };

// ---- human in the loop ----

/** The kinds of pause, as lib/pauses.ts registers them. */
export type PauseKind = keyof PauseKinds;
export type PauseStatus = 'open' | 'answered' | 'dismissed' | 'cancelled';

export type Question = {
  question: string;
  /** A short label; may be ''. */
  header: string;
  /** Suggested answers, shown as buttons (0..6). */
  options: string[];
  /** Several options may be picked (joined with ", "). */
  multiple: boolean;
};
export type QuestionRequest = { questions: Question[] };
/** One answer per question, in order, none empty. */
export type QuestionAnswer = { answers: string[] };

export type ApprovalItemKind = 'command' | 'target' | 'diff' | 'text';
export type ApprovalItem = {
  id: string;
  title: string;
  kind: ApprovalItemKind;
  detail: string;
  /** The tool that runs when approved ('' = the agent acts itself). */
  tool: string;
  input: unknown;
};
/** policy: raised by an ask-first switch. */
export type ApprovalRequest = { title: string; reason: string; policy: boolean; items: ApprovalItem[] };
export type ApprovalDecision = { id: string; approved: boolean; note: string };
export type ApprovalAnswer = { decisions: ApprovalDecision[] };

export type ConnectorFieldType = 'text' | 'url' | 'secret' | 'select';
export type ConnectorField = {
  name: string;
  label: string;
  type: ConnectorFieldType;
  required: boolean;
  options: string[];
  placeholder: string;
  help: string;
};
export type ConnectorRequest = { connector: string; title: string; description: string; fields: ConnectorField[] };
/** Stored secret fields read "${VARIABLE}". */
export type ConnectorAnswer = { values: Record<string, string> };

export type CredentialRequest = { variable: string; label: string; description: string; url: string };
/** Never the value. */
export type CredentialAnswer = { variable: string; filled: true };

/** The agent needs the person's hands in its browser (a captcha, a sign-in); url: the page it is on. */
export type TakeoverRequest = { reason: string; url: string };
/** Answered by Hand back in the Desktop tab. */
export type TakeoverAnswer = { handed_back: true };

/** A run reached a spend limit before its next model call: what was spent (tokens or USD) against which limit. */
export type BudgetRequest = {
  scope: 'run' | 'agent' | 'workspace';
  period: 'run' | 'day';
  unit: 'tokens' | 'usd';
  agent_id: string;
  /** Whose limit: the agent's or the workspace's. */
  owner: 'agent' | 'workspace';
  /** YYYY-MM-DD of a daily limit. */
  day?: string;
  limit: number;
  spent: number;
  /** About what the next call needs. */
  need: number;
  suggest_more: number;
  suggest_limit: number;
};
/** allow: amount more for this run; raise: the new limit; stop: end the run. */
export type BudgetAnswer = { choice: 'allow' | 'raise' | 'stop'; amount: number };

/** Spend limits of the workspace or an agent; 0 is none. */
export type BudgetLimits = { run_tokens: number; run_usd: number; day_tokens: number; day_usd: number };
export type DaySpend = { day: string; tokens: number; cost_usd: number };
/** A scope's limits and its spend per day, oldest first. */
export type Budget = { limits: BudgetLimits; days: DaySpend[] };

export type DismissAnswer = { dismissed: true; note: string };

type PauseBase = {
  id: string;
  run_id: string;
  agent_id: string;
  session_id: string;
  status: PauseStatus;
  /** The tool call that raised it; '' for an ask-first approval. */
  tool_call_id: string;
  /** The run was started by a schedule, trigger, agent or the API. */
  automated: boolean;
  created_at: string;
  answered_at: string | null;
};
/** A pause of each kind: its request and its answer (null while open). */
export type Pause = {
  [K in PauseKind]: PauseBase & { kind: K; request: PauseKinds[K]['request']; answer: PauseKinds[K]['answer'] | DismissAnswer | null };
}[PauseKind];

/** What POST …/pauses/{id}/answer takes: what a kind's card sends, or a dismissal. */
export type PauseReply = PauseKinds[PauseKind]['reply'] | { dismiss: true; note?: string };

export type PauseQuery = { agent_id?: string; status?: PauseStatus };

export type NotificationKind = 'info' | 'progress' | 'done' | 'error' | PauseKind;
export type Notification = {
  id: string;
  agent_id: string;
  run_id: string;
  /** '' unless raised by a pause. */
  pause_id: string;
  kind: NotificationKind;
  title: string;
  body: string;
  automated: boolean;
  created_at: string;
  /** Dismissed, or its pause answered; null = waiting. */
  handled_at: string | null;
};
export type NotificationQuery = { agent_id?: string; open?: boolean; limit?: number };

export type Channel = 'in_app' | 'os' | 'email' | 'hooks' | 'phone';
/** Runs you started in chat | runs that fired on their own. */
export type Origin = 'mine' | 'automated';
export type Delivery = Record<NotificationKind, Record<Origin, Record<Channel, boolean>>>;

/** A workspace variable (never its value); hosts: where its value may be sent, [] for any host. */
export type Variable = { name: string; hosts: string[]; created_at: string; updated_at: string };

// ---- desktop: each agent's browser ----

export type BrowserTab = { id: string; url: string; title: string; active: boolean };

/** What the Desktop's address bar asks of the agent's browser (while the person holds it). */
export type BrowserNav = { action: 'go'; url: string } | { action: 'back' | 'forward' | 'reload' };

/** An agent's browser for its Desktop tab. */
export type BrowserState = {
  running: boolean;
  url: string;
  title: string;
  tabs: BrowserTab[];
  /** The person holds the browser. */
  in_control: boolean;
  /** A browser tool of the agent waits for the hand-back. */
  waiting: boolean;
  /** What the agent last did, e.g. `clicked [12] button "Sign in"`. */
  last_action: string;
  last_action_at: string | null;
  /** The current tab has an earlier page (Back goes somewhere). */
  can_go_back: boolean;
  /** The current tab has a later page, after going back (Forward goes somewhere). */
  can_go_forward: boolean;
};
export type Variables = { key_store: 'keychain' | 'file'; key_store_note: string; variables: Variable[] };

// ---- automations ----

export type ScheduleKind = 'cron' | 'once';
export type CatchUp = 'once' | 'skip';

/** A recurring (cron, in a time zone) or one-off instruction; runs in its own session. */
export type Schedule = {
  id: string;
  agent_id: string;
  session_id: string;
  name: string;
  instruction: string;
  kind: ScheduleKind;
  /** 5 fields or @hourly/@daily/…; '' for once. */
  cron: string;
  /** IANA, e.g. "Europe/Berlin". */
  timezone: string;
  /** once: the moment (RFC 3339). */
  at: string | null;
  enabled: boolean;
  /** After sleep or downtime: run once if missed within catch_up_within, or skip. */
  catch_up: CatchUp;
  /** A Go duration, e.g. "24h0m0s". */
  catch_up_within: string;
  next_fire_at: string | null;
  last_fired_at: string | null;
  /** Human-readable, e.g. "Every day at 09:00". */
  description: string;
  created_at: string;
  updated_at: string;
};

/** What POST …/schedules takes; PATCH takes any part of it. */
export type ScheduleInput = {
  name: string;
  instruction: string;
  kind: ScheduleKind;
  cron?: string;
  timezone?: string;
  at?: string | null;
  enabled?: boolean;
  catch_up?: CatchUp;
  /** A Go duration or a number of seconds. */
  catch_up_within?: string | number;
};

export type SchedulePreviewInput = { kind: ScheduleKind; cron: string; timezone: string; at: string | null };
export type SchedulePreview = { description: string; next: string[] };

/** One firing of a schedule (or a time it missed). */
export type Fire = {
  id: string;
  schedule_id: string;
  scheduled_for: string;
  fired_at: string;
  outcome: 'fired' | 'missed' | 'manual';
  /** '' for missed. */
  run_id: string;
  note: string;
  error: string;
};

/** A webhook URL that starts a run; the URL is the credential, shown whole only on create and rotate. */
export type Trigger = {
  id: string;
  agent_id: string;
  session_id: string;
  name: string;
  instruction: string;
  /** Allowed HTTP methods, default ['POST']. */
  methods: string[];
  /** "rrh_abc123". */
  token_prefix: string;
  /** '' = no signature check; else the variable holding the Standard Webhooks secret. */
  signing_secret_var: string;
  enabled: boolean;
  /** Calls per minute. */
  rate_limit: number;
  /** After a rotation with a grace period. */
  old_token_expires_at: string | null;
  /** "http://127.0.0.1:7777/hooks/rrh_abc123…", for display. */
  url_prefix: string;
  /** "https://relay.example.com/h/rrh_abc123…" when the workspace is linked to a relay. */
  public_url_prefix?: string;
  created_at: string;
  updated_at: string;
  rotated_at: string | null;
};

export type TriggerInput = {
  name: string;
  instruction: string;
  methods?: string[];
  signing_secret_var?: string;
  enabled?: boolean;
  rate_limit?: number;
};

/** A trigger with its whole URL: answered by create and rotate only. */
export type TriggerWithUrl = { trigger: Trigger; url: string; /** Through the workspace's relay, when linked. */ public_url?: string };

/** One call of a trigger's URL (or a test). */
export type TriggerDelivery = {
  id: string;
  trigger_id: string;
  received_at: string;
  /** The HTTP status answered. */
  status: number;
  /** 'queued' | 'duplicate' | 'rejected' | 'test' | … */
  outcome: string;
  run_id: string;
  error: string;
  method: string;
  content_type: string;
  size: number;
};

// ---- apps (connectors and MCP servers) ----

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

// ---- templates ----

/** A packaged coworker setup (a .rerun-template file): never memories, variable values, tokens or keys. */
export type Template = {
  id: string;
  name: string;
  /** The spend limits its author suggests; the installer takes, changes or clears them. */
  budget?: BudgetLimits;
  description: string;
  author: string;
  category: string;
  /** Metadata only. */
  price: 'free' | 'paid';
  /** A suggestion; empty parts leave the workspace default. */
  model: { provider: string; model: string };
  capabilities: string[];
  ask_first: Record<string, boolean>;
  soul: string;
  skills: { name: string; description: string; files: string[] }[];
  /** Installed paused. */
  schedules: TemplateSchedule[];
  /** Installed with new URLs (a template holds no tokens). */
  triggers: { name: string; instruction: string; methods: string[] }[];
  /** Apps declared on install: the person finishes the sign-in. */
  connectors: { catalog_id: string; name: string }[];
  /** What the agent needs, asked for through credential cards on install; never values. */
  variables: TemplateVariable[];
  /** Paths under files/. */
  files: string[];
  status: 'draft' | 'submitted';
  schema_version: number;
  created_at: string;
  updated_at: string;
};

export type TemplateSchedule = {
  name: string;
  instruction: string;
  kind: ScheduleKind;
  cron: string;
  timezone: string;
  at: string | null;
  catch_up: CatchUp;
};

export type TemplateVariable = { name: string; help: string; url: string };

/** What "Save as template" would put in and leave out, one line each. */
export type TemplatePreview = { included: string[]; left_out: string[] };

/** POST …/templates: a blank template's metadata, or one made from an agent. */
export type NewTemplate =
  | { from_agent: string; name?: string; description?: string; category?: string }
  | { name: string; description?: string; category?: string };

export type TemplatePatch = Partial<Pick<Template, 'name' | 'description' | 'author' | 'category' | 'price'>>;

/** What installing made: the agent and one line per card it raised. */
export type TemplateInstall = { agent: Agent; cards: string[] };

/** Who wrote a Brain version: the person, the Foreman (onboarding) or an agent whose proposal was approved. */
export type BrainAuthor = string; // 'person' | 'foreman' | 'agent:@handle'
/** A Brain page in the list: everything but its body (docs/http-api.md, "The Brain"). */
export type BrainSummary = {
  id: string;
  slug: string;
  title: string;
  /** What agents read: own_summary, else the body's first paragraph. */
  summary: string;
  own_summary: string;
  version: number;
  size: number;
  edited_by_person: boolean;
  created_at: string;
  updated_at: string;
  updated_by: BrainAuthor;
};
export type BrainPage = BrainSummary & { body: string };
export type BrainVersion = { version: number; title: string; summary: string; body: string; author: BrainAuthor; created_at: string };
export type BrainPageInput = { title: string; body: string; summary?: string };

/** Settings → Notifications → Email; host "" is off. password names a variable: "${SMTP_PASSWORD}". */
export type EmailSettings = {
  host: string;
  port: number;
  tls: 'starttls' | 'tls' | 'none';
  user: string;
  password: string;
  from: string;
  to: string;
};

export type HookFlavour = 'slack' | 'discord' | 'ntfy' | 'json';

/** An outgoing notification hook; url may hold ${NAME} references, secret (json) names a variable. */
export type NotificationHook = {
  id: string;
  name: string;
  flavour: HookFlavour;
  url: string;
  secret: string;
  kinds: NotificationKind[] | null;
};

/** A test button's outcome: the server's own answer when it refused. */
export type SendTest = { ok: boolean; answer: string };

/** One mail or hook POST of a notification. */
export type OutboxDelivery = {
  id: string;
  notification_id: string;
  channel: 'email' | 'hook' | 'phone';
  target: string;
  target_name: string;
  status: 'pending' | 'sending' | 'sent' | 'failed';
  attempts: number;
  last_error: string;
  next_at: string | null;
  created_at: string;
  sent_at: string | null;
};

/** A backup made into a folder (Settings → Backups), or its failure. */
export interface FolderBackup {
  path: string;
  files: number;
  bytes: number;
  took: string;
  finished: string;
  error?: string;
  removed?: string[];
}

/** Settings → Backups' daily schedule; the passphrase itself is never sent back. */
export interface BackupSchedule {
  enabled: boolean;
  folder: string;
  keep: number;
  has_passphrase: boolean;
}
