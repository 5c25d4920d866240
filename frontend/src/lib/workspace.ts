// Workspaces, boxes and agents as the API sends them (docs/http-api.md); the
// store that keeps them for the page is workspace.svelte.ts.
import type { Activity } from './runs';

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

/** What the page needs before it paints the board (GET /api/boot), in one answer. */
export type Boot = WorkspaceList & { capabilities: Capability[]; board: Board | null };

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
