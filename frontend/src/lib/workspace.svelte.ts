// What the window shows, loaded from the API and kept fresh by the event stream.
// Actions throw ApiError; the component that started them shows it.
import { api } from './api';
import type { StreamStatus } from './events';
import type { ChangeEvent } from './events';
import type { Agent, AgentPatch, Board, Box, Capability, NewAgent, SoulVersion, Workspace } from './workspace';

export class WorkspaceState {
  workspaces = $state<Workspace[]>([]);
  currentId = $state('');
  board = $state<Board | null>(null);
  capabilities = $state<Capability[]>([]);
  selectedAgentId = $state<string | null>(null);
  stream = $state<StreamStatus>('connecting');
  /** Bumped on every board load, so open views can refetch what hangs off it (soul history). */
  revision = $state(0);

  current = $derived(this.workspaces.find((w) => w.id === this.currentId) ?? this.board?.workspace);
  boxes = $derived<Box[]>(this.board ? [...this.board.boxes].sort((a, b) => a.position - b.position) : []);
  agents = $derived<Agent[]>(this.board?.agents ?? []);
  selectedAgent = $derived(this.agents.find((a) => a.id === this.selectedAgentId));

  private inflight: Promise<void> | null = null;
  private again = false;

  private started: Promise<void> | null = null;

  /**
   * The first load, once: main.ts starts it before the app mounts (index.html
   * asked for its answer already), so the app's first frame draws the board
   * rather than an empty one; App waits for the same load. init loads again.
   */
  start(): Promise<void> {
    return (this.started ??= this.init());
  }

  async init() {
    const rev = this.revision;
    const boot = await api.boot();
    this.workspaces = boot.workspaces;
    this.capabilities = boot.capabilities;
    this.currentId = boot.current || boot.workspaces[0]?.id || '';
    // A board loaded or asked for meanwhile (an event's) is newer than the boot's.
    const newer = this.revision !== rev || this.inflight !== null;
    if (!newer && boot.board && boot.board.workspace.id === this.currentId) this.show(boot.board);
    else await this.refreshBoard();
  }

  async refreshWorkspaces() {
    const list = await api.listWorkspaces();
    this.workspaces = list.workspaces;
    if (!this.currentId) this.currentId = list.current;
  }

  /** Loads the current board; calls made while one load runs share one more load after it. */
  refreshBoard(): Promise<void> {
    this.again = true;
    if (!this.inflight) {
      this.inflight = (async () => {
        try {
          while (this.again) {
            this.again = false;
            const ws = this.currentId;
            if (!ws) {
              this.board = null;
              continue;
            }
            const board = await api.getBoard(ws);
            if (ws === this.currentId && !this.again) this.show(board);
          }
        } finally {
          this.again = false;
          this.inflight = null;
        }
      })();
    }
    return this.inflight;
  }

  /** Puts a loaded board on screen; an agent selected and now gone is let go. */
  private show(board: Board) {
    this.board = board;
    this.revision++;
    if (this.selectedAgentId && !board.agents.some((a) => a.id === this.selectedAgentId)) this.selectedAgentId = null;
  }

  /** Reacts to one event of the stream. Returns the refresh it started, for error reporting. */
  onChange(ev: ChangeEvent): Promise<unknown> {
    const work: Promise<unknown>[] = [];
    if (ev.kind.startsWith('workspace.')) work.push(this.refreshWorkspaces());
    // A run's steps, memories, skills, variables, settings and budgets change nothing on the board; a run's creation
    // and status do (activity), and so do pauses and notifications (waiting, the bell) and schedules and
    // triggers coming and going (the clock badge). A fire or a delivery shows as the run it starts. A
    // browser's page or holder shows only in its Desktop; templates only in their library.
    const boardless =
      ev.kind === 'workspace.switched' ||
      ev.kind.startsWith('browser.') ||
      ev.kind.startsWith('template.') ||
      ev.kind === 'run.step' ||
      ev.kind === 'memory.changed' ||
      ev.kind === 'memory.reembed' ||
      ev.kind === 'skill.changed' ||
      ev.kind === 'variables.changed' ||
      ev.kind === 'settings.changed' ||
      ev.kind === 'budget.updated' ||
      ev.kind === 'schedule.fired' ||
      ev.kind === 'trigger.delivery';
    if (ev.workspace === this.currentId && !boardless) {
      work.push(this.refreshBoard());
    }
    return Promise.all(work);
  }

  resync(): Promise<unknown> {
    return Promise.all([this.refreshWorkspaces(), this.refreshBoard()]);
  }

  async switchTo(id: string) {
    if (id === this.currentId) return;
    await api.switchWorkspace(id);
    this.currentId = id;
    this.selectedAgentId = null;
    this.board = null;
    await this.refreshBoard();
  }

  async createWorkspace(name: string) {
    const ws = await api.createWorkspace(name);
    this.workspaces = [...this.workspaces.filter((w) => w.id !== ws.id), ws];
    await this.switchTo(ws.id);
    return ws;
  }

  async renameWorkspace(name: string) {
    const ws = await api.renameWorkspace(this.currentId, name);
    this.workspaces = this.workspaces.map((w) => (w.id === ws.id ? ws : w));
    if (this.board) this.board.workspace = ws;
  }

  async createBox(name: string) {
    const box = await api.createBox(this.currentId, name);
    await this.refreshBoard();
    return box;
  }

  async renameBox(id: string, name: string) {
    await api.renameBox(this.currentId, id, name);
    await this.refreshBoard();
  }

  async deleteBox(id: string) {
    await api.deleteBox(this.currentId, id);
    await this.refreshBoard();
  }

  /** Moves a box one place earlier (-1) or later (+1). */
  async shiftBox(id: string, by: -1 | 1) {
    const ids = this.boxes.map((b) => b.id);
    const i = ids.indexOf(id);
    const j = i + by;
    if (i < 0 || j < 0 || j >= ids.length) return;
    [ids[i], ids[j]] = [ids[j]!, ids[i]!];
    await api.reorderBoxes(this.currentId, ids);
    await this.refreshBoard();
  }

  async createAgent(input: NewAgent) {
    const agent = await api.createAgent(this.currentId, input);
    await this.refreshBoard();
    return agent;
  }

  async updateAgent(id: string, patch: AgentPatch) {
    const agent = await api.updateAgent(this.currentId, id, patch);
    this.replaceAgent(agent);
    void this.refreshBoard().catch(() => {}); // the PATCH already answered; the stream will retry
    return agent;
  }

  /** Moves an agent to another box, showing the move before the server confirms it. */
  async moveAgent(id: string, boxId: string) {
    const before = this.agents.find((a) => a.id === id);
    if (!before || before.box_id === boxId) return;
    this.replaceAgent({ ...before, box_id: boxId });
    try {
      const agent = await api.updateAgent(this.currentId, id, { box_id: boxId });
      this.replaceAgent(agent);
    } catch (err) {
      await this.refreshBoard().catch(() => {});
      throw err;
    }
  }

  async deleteAgent(id: string) {
    await api.deleteAgent(this.currentId, id);
    if (this.selectedAgentId === id) this.selectedAgentId = null;
    await this.refreshBoard();
  }

  souls(agentId: string): Promise<SoulVersion[]> {
    return api.listSouls(this.currentId, agentId);
  }

  deriveHandle(name: string): Promise<{ handle: string }> {
    return api.deriveHandle(name, this.currentId);
  }

  boxName(id: string): string {
    return this.boxes.find((b) => b.id === id)?.name ?? '';
  }

  private replaceAgent(agent: Agent) {
    if (!this.board) return;
    this.board.agents = this.board.agents.map((a) => (a.id === agent.id ? agent : a));
  }
}

export const workspace = new WorkspaceState();
