// One agent's chat: its sessions, the open transcript, text streaming in, and
// sending. Fed by the event stream through runFeed while the Chat tab is shown.
import { api } from './api';
import { buildTranscript, isActive, PendingText, runActivity, textSteps } from './runs';
import type { ChangeEvent, DeltaEvent } from './events';
import type { ModelsInfo } from './models';
import type { PauseReply } from './pausetypes';
import type { RunDetail, Session, Transcript } from './runs';

export class ChatState {
  sessions = $state<Session[]>([]);
  sessionId = $state('');
  transcript = $state<Transcript | null>(null);
  models = $state<ModelsInfo | null>(null);
  loading = $state(true);
  error = $state('');
  private streamed = $state<Record<string, string>>({});
  private pending = new PendingText();
  private inflight: Promise<void> | null = null;
  private again = false;
  /** A session opened on purpose (a pause in To handle) stays open even when it is not a chat. */
  private chosen = '';

  readonly wsId: string;
  readonly agentId: string;

  constructor(wsId: string, agentId: string) {
    this.wsId = wsId;
    this.agentId = agentId;
  }

  session = $derived(this.sessions.find((s) => s.id === this.sessionId) ?? this.transcript?.session);
  runs = $derived<RunDetail[]>(this.transcript?.session.id === this.sessionId ? this.transcript.runs : []);
  items = $derived(buildTranscript(this.runs, this.streamed));
  activeRun = $derived([...this.runs].reverse().find((r) => isActive(r.status)));
  /** The session's open pause: its card replaces the message box. */
  pause = $derived(this.transcript?.session.id === this.sessionId ? (this.transcript.pause ?? null) : null);
  /** A browser tool of the agent waits because the person holds its browser. */
  browserWaits = $state(false);
  status = $derived(
    this.activeRun
      ? this.browserWaits && this.activeRun.status === 'running'
        ? 'Waiting: you have the browser'
        : runActivity(this.activeRun, this.streamed[this.activeRun.id])
      : '',
  );

  async load() {
    this.loading = true;
    this.error = '';
    try {
      const [sessions, models] = await Promise.all([
        api.listSessions(this.wsId, this.agentId),
        api.listModels().catch(() => null),
      ]);
      this.sessions = sessions;
      this.models = models;
      const keep = this.sessionId && (this.sessionId === this.chosen || sessions.some((s) => s.id === this.sessionId));
      if (!keep) this.sessionId = sessions[0]?.id ?? '';
      await this.refresh();
    } catch (err) {
      this.error = err instanceof Error ? err.message : String(err);
    } finally {
      this.loading = false;
    }
  }

  async loadModels() {
    this.models = await api.listModels().catch(() => this.models);
  }

  /** Refetches the open transcript; calls made while one fetch runs share one more after it. */
  refresh(): Promise<void> {
    this.again = true;
    if (!this.inflight) {
      this.inflight = (async () => {
        await null; // let `inflight` be set before the loop can end it
        try {
          while (this.again) {
            this.again = false;
            const sid = this.sessionId;
            if (!sid) {
              this.transcript = null;
              continue;
            }
            const t = await api.getTranscript(this.wsId, sid);
            if (sid !== this.sessionId) continue;
            this.pending.settle(t.runs);
            this.transcript = t;
            this.streamed = this.pending.snapshot();
          }
        } finally {
          this.again = false;
          this.inflight = null;
        }
      })();
    }
    return this.inflight;
  }

  async refreshSessions() {
    this.sessions = await api.listSessions(this.wsId, this.agentId);
  }

  onChange(ev: ChangeEvent) {
    if (ev.agent !== this.agentId || ev.workspace !== this.wsId) return;
    if (ev.kind === 'run.created' || !this.sessions.some((s) => s.id === ev.session)) void this.refreshSessions().catch(() => {});
    if (ev.session !== this.sessionId || !this.sessionId) return;
    if (ev.kind === 'run.step' && ev.id) this.pending.step(ev.id);
    void this.refresh().catch(() => {});
  }

  /** The agent's browser changed hands or state: does a tool of this run wait for the hand-back? */
  async onBrowser(ev: ChangeEvent) {
    if (ev.workspace !== this.wsId || ev.agent !== this.agentId) return;
    const state = await api.getBrowser(this.wsId, this.agentId).catch(() => null);
    this.browserWaits = !!state?.waiting;
  }

  /** A pause of the open session was raised or answered (the card comes or goes). */
  onHuman(ev: ChangeEvent) {
    if (ev.workspace !== this.wsId || ev.agent !== this.agentId || !ev.kind.startsWith('pause.')) return;
    if (ev.session && ev.session === this.sessionId) void this.refresh().catch(() => {});
  }

  /** Answers (or dismisses) the open pause; the run continues from it. */
  async answer(pauseId: string, reply: PauseReply) {
    await api.answerPause(this.wsId, pauseId, reply);
    await this.refresh();
  }

  onDelta(ev: DeltaEvent) {
    if (ev.agent !== this.agentId || ev.session !== this.sessionId || !ev.text) return;
    this.pending.add(ev.run, ev.text, textSteps(this.runs.find((r) => r.id === ev.run)));
    this.streamed = this.pending.snapshot();
  }

  /**
   * Sends a message. It resolves as soon as the server has taken it (the
   * message box can empty then); the transcript and the session list follow
   * without being waited on, as the answer may stream in before they load.
   */
  async send(text: string) {
    const run = await api.sendMessage(this.wsId, this.agentId, text, this.sessionId || undefined);
    if (run.session_id !== this.sessionId) {
      this.sessionId = run.session_id;
      this.pending.clear();
      this.streamed = {};
    }
    void this.refresh().catch((err) => (this.error = err instanceof Error ? err.message : String(err)));
    void this.refreshSessions().catch(() => {});
  }

  async newChat() {
    const s = await api.createSession(this.wsId, this.agentId);
    this.sessions = [s, ...this.sessions.filter((x) => x.id !== s.id)];
    this.open(s.id);
    this.transcript = { session: s, runs: [] };
  }

  open(sessionId: string) {
    this.chosen = sessionId;
    if (sessionId === this.sessionId) return;
    this.sessionId = sessionId;
    this.pending.clear();
    this.streamed = {};
    this.transcript = null;
    void this.refresh().catch((err) => (this.error = err instanceof Error ? err.message : String(err)));
  }

  async stop() {
    const run = this.activeRun;
    if (run) await api.cancelRun(this.wsId, run.id);
    await this.refresh();
  }

  /** Switches the conversation's model ('' and '' = the agent's own). */
  async setModel(provider: string, model: string) {
    if (!this.sessionId) await this.newChat();
    const s = await api.updateSession(this.wsId, this.sessionId, { provider, model });
    this.sessions = this.sessions.map((x) => (x.id === s.id ? s : x));
    if (this.transcript?.session.id === s.id) this.transcript.session = s;
  }
}
