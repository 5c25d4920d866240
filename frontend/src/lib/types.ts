// Wire types of the local HTTP API (docs/http-api.md).

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
  created_at: string;
  updated_at: string;
};

export type SoulVersion = { version: number; body: string; created_at: string };

export type Capability = { id: string; label: string; description: string };

export type Board = { workspace: Workspace; boxes: Box[]; agents: Agent[] };

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
  Pick<Agent, 'name' | 'soul' | 'provider' | 'model' | 'capabilities' | 'box_id'>
>;

export type ChangeKind =
  | 'workspace.created'
  | 'workspace.updated'
  | 'workspace.switched'
  | 'box.created'
  | 'box.updated'
  | 'box.deleted'
  | 'boxes.reordered'
  | 'agent.created'
  | 'agent.updated'
  | 'agent.deleted';

export type ChangeEvent = { workspace: string; kind: ChangeKind | string; id?: string };
