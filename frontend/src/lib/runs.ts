// Pure helpers for runs: the chat transcript built from steps, streamed text
// waiting for its step, and how durations, costs and tokens read.
import type { Pause, PauseKind, PauseStatus } from './pausetypes';

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

export type ChatItem =
  | { kind: 'user'; key: string; text: string; from: string }
  | { kind: 'agent'; key: string; text: string; streaming: boolean }
  | {
      kind: 'tool';
      key: string;
      name: string;
      input: unknown;
      /** undefined while the tool runs */
      output?: string;
      isError: boolean;
      childRunId?: string;
      /** Held for approval: how the person decided. */
      decision?: Decision;
    }
  /** The run stopped for the person (pause: its card, when the run detail carries it). */
  | { kind: 'pause'; key: string; pauseKind: PauseKind; pause?: Pause }
  /** The run continued from the person's answer. */
  | { kind: 'resume'; key: string; status: PauseStatus; pause?: Pause }
  | { kind: 'error'; key: string; message: string }
  | { kind: 'cancel'; key: string; reason: string }
  | { kind: 'note'; key: string; text: string };

/** A run's status as a person reads it: a paused run waits for them. */
export const statusLabel = (status: RunStatus) => (status === 'paused' ? 'waiting for you' : status);

export const isActive = (status: RunStatus) => status === 'queued' || status === 'running' || status === 'paused';

/**
 * The chat items of a session's runs (oldest first), with `pending` (streamed
 * text by run id, not yet committed as a step) as a last agent bubble of its run.
 */
export function buildTranscript(runs: RunDetail[], pending: Record<string, string> = {}): ChatItem[] {
  const items: ChatItem[] = [];
  for (const run of runs) {
    const pauses = new Map((run.pauses ?? []).map((p) => [p.id, p]));
    // A tool call that raised a pause (ask_question, …) reads as its pause and resume rows.
    const raised = new Set((run.pauses ?? []).map((p) => p.tool_call_id).filter(Boolean));
    const tools = new Map<string, Extract<ChatItem, { kind: 'tool' }>>();
    let sawError = false;
    for (const step of run.steps) {
      const key = `${run.id}:${step.seq}`;
      switch (step.kind) {
        case 'input':
          items.push({ kind: 'user', key, text: step.data.text, from: step.data.from || 'you' });
          break;
        case 'model':
          if (step.data.text?.trim()) items.push({ kind: 'agent', key, text: step.data.text, streaming: false });
          break;
        case 'tool_call': {
          if (raised.has(step.data.id)) break;
          const item: Extract<ChatItem, { kind: 'tool' }> = {
            kind: 'tool',
            key,
            name: step.data.name,
            input: step.data.input,
            isError: false,
          };
          tools.set(step.data.id, item);
          items.push(item);
          break;
        }
        case 'tool_result': {
          if (raised.has(step.data.id)) break;
          const call = tools.get(step.data.id);
          const target = call ?? { kind: 'tool', key, name: step.data.name, input: undefined, isError: false };
          target.output = step.data.output;
          target.isError = !!step.data.is_error;
          if (step.data.child_run_id) target.childRunId = step.data.child_run_id;
          if (step.data.decision) target.decision = step.data.decision;
          if (!call) items.push(target);
          break;
        }
        case 'pause':
          items.push({ kind: 'pause', key, pauseKind: step.data.kind, pause: pauses.get(step.data.pause_id) });
          break;
        case 'resume':
          items.push({ kind: 'resume', key, status: step.data.status, pause: pauses.get(step.data.pause_id) });
          break;
        case 'error':
          sawError = true;
          items.push({ kind: 'error', key, message: step.data.message });
          break;
        case 'cancel':
          items.push({ kind: 'cancel', key, reason: step.data.reason });
          break;
        case 'compact':
          items.push({ kind: 'note', key, text: 'Earlier messages were summarised to save space.' });
          break;
        case 'note':
          items.push({ kind: 'note', key, text: step.data.text });
          break;
      }
    }
    if (run.status === 'failed' && !sawError && run.error) {
      items.push({ kind: 'error', key: `${run.id}:error`, message: run.error });
    }
    const streamed = pending[run.id];
    if (streamed && isActive(run.status)) {
      items.push({ kind: 'agent', key: `${run.id}:pending`, text: streamed, streaming: true });
    }
  }
  return items;
}

/** What an unfinished run is doing now, for the status line under the chat. */
export function runActivity(run: RunDetail, streamed = ''): string {
  if (run.status === 'queued') return 'Waiting to start…';
  if (run.status === 'paused') return 'Waiting for you';
  if (streamed) return 'Writing…';
  const results = new Set(run.steps.flatMap((s) => (s.kind === 'tool_result' ? [s.data.id] : [])));
  for (let i = run.steps.length - 1; i >= 0; i--) {
    const s = run.steps[i]!;
    if (s.kind === 'tool_call' && !results.has(s.data.id)) return `Running ${s.data.name}…`;
  }
  return 'Thinking…';
}

/** How many model steps of a run hold text: each streamed its text first. */
export function textSteps(run: RunDetail | undefined): number {
  return run ? run.steps.filter((s) => s.kind === 'model' && s.data.text?.trim()).length : 0;
}

/**
 * Streamed text per run, one segment per model call. Segment i of a run is its
 * i-th model step with text: once a fetched transcript holds that step, the
 * segment is dropped (the step replaces it), whatever order fetches and events
 * arrive in.
 */
export class PendingText {
  private runs = new Map<string, { next: number; segments: { index: number; text: string; closed: boolean }[] }>();

  /** Appends streamed text; `committed` is the run's textSteps in the transcript shown now. */
  add(runId: string, text: string, committed = 0) {
    let r = this.runs.get(runId);
    if (!r) {
      r = { next: committed, segments: [] };
      this.runs.set(runId, r);
    }
    const last = r.segments.at(-1);
    if (last && !last.closed) last.text += text;
    else r.segments.push({ index: r.next++, text, closed: false });
  }

  /** A step of the run was committed: text streamed after this belongs to the next model call. */
  step(runId: string) {
    const last = this.runs.get(runId)?.segments.at(-1);
    if (last) last.closed = true;
  }

  /** A transcript arrived: drops what it holds; forgets finished runs. */
  settle(runs: RunDetail[]) {
    for (const run of runs) {
      const r = this.runs.get(run.id);
      if (!r) continue;
      if (!isActive(run.status)) {
        this.runs.delete(run.id);
        continue;
      }
      const n = textSteps(run);
      r.segments = r.segments.filter((seg) => seg.index >= n);
      r.next = Math.max(r.next, n);
    }
  }

  /** Text to show, by run id. */
  snapshot(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [id, r] of this.runs) {
      const text = r.segments.map((s) => s.text).join('\n\n');
      if (text) out[id] = text;
    }
    return out;
  }

  clear() {
    this.runs.clear();
  }
}

/** "0.4 s", "12 s", "3 m 05 s", "2 h 10 m"; '' when unknown. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 10) return `${s.toFixed(1)} s`;
  if (s < 60) return `${Math.round(s)} s`;
  const total = Math.round(s);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = total % 60;
  if (h > 0) return `${h} h ${String(m).padStart(2, '0')} m`;
  return `${m} m ${String(sec).padStart(2, '0')} s`;
}

/** Milliseconds between two times; null when either is missing. */
export function between(start: string | null | undefined, end: string | null | undefined): number | null {
  if (!start || !end) return null;
  const a = Date.parse(start);
  const b = Date.parse(end);
  return Number.isFinite(a) && Number.isFinite(b) ? b - a : null;
}

/** US dollars with two significant digits below a cent: "$0", "$0.000049", "$0.0012", "$0.35", "$12.40". */
export function formatCost(usd: number, known = true): string {
  if (!known) return 'price unknown';
  if (!usd || usd <= 0) return '$0';
  if (usd < 0.01) return '<$0.01'; // money as people count it; exactCost has the digits
  return `$${usd.toFixed(2)}`;
}

/** The cost to two significant digits ("$0.000061"), for a tooltip beside formatCost. */
export function exactCost(usd: number, known = true): string {
  if (!known) return 'The model’s price is not known';
  if (!usd || usd <= 0) return '$0';
  if (usd < 0.000001) return '<$0.000001';
  if (usd < 0.01) return `$${usd.toFixed(Math.ceil(-Math.log10(usd)) + 1)}`;
  return `$${usd.toFixed(2)}`;
}

/** "1.2k in · 350 out tokens": token counts that say what they count. */
export function tokenCounts(input: number, output: number): string {
  return `${formatTokens(input)} in · ${formatTokens(output)} out tokens`;
}

/** 950, "1.2k", "3.4M". */
export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** A one-line summary of tool arguments: `path: "a.txt", content: "…"`. */
export function argSummary(input: unknown, max = 60): string {
  let s: string;
  if (input && typeof input === 'object' && !Array.isArray(input)) {
    s = Object.entries(input as Record<string, unknown>)
      .map(([k, v]) => `${k}: ${typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v) ?? String(v)}`)
      .join(', ');
  } else if (input === undefined) {
    s = '';
  } else {
    s = JSON.stringify(input) ?? '';
  }
  return s.length > max ? s.slice(0, max - 1) + '…' : s;
}

/** Pretty JSON; a string that holds JSON is parsed first, other strings stay as they are. */
export function prettyJson(value: unknown): string {
  if (typeof value === 'string') {
    const t = value.trim();
    if (t.startsWith('{') || t.startsWith('[')) {
      try {
        return JSON.stringify(JSON.parse(t), null, 2);
      } catch {
        return value;
      }
    }
    return value;
  }
  if (value === undefined) return '';
  return JSON.stringify(value, null, 2) ?? String(value);
}

/** "14:05:12" in local time. */
export function clock(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? '' : d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/** "14:05" today, else "Mon 28 Nov 09:10". */
export function when(iso: string | null, now = new Date()): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const time = d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  if (d.toDateString() === now.toDateString()) return time;
  return `${d.toLocaleDateString([], { weekday: 'short', day: 'numeric', month: 'short' })} ${time}`;
}

export const stepLabel: Record<Step['kind'], string> = {
  input: 'Input',
  model: 'Model',
  tool_call: 'Tool call',
  tool_result: 'Tool result',
  error: 'Error',
  cancel: 'Cancelled',
  compact: 'Compacted',
  note: 'Note',
  pause: 'Paused for you',
  resume: 'Resumed',
};
