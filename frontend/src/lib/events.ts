// The one live event stream: GET /api/events (Server-Sent Events).

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
  | 'template.deleted'
  | 'update.checked';

/** run.* events also name the run's agent and session; memory.reembed carries `text: "done/total"`; update.checked names no workspace. */
export type ChangeEvent = { workspace: string; kind: ChangeKind | string; id?: string; agent?: string; session?: string; text?: string };

/** Streamed model text of a run, before its `model` step is committed. */
export type DeltaEvent = { workspace: string; run: string; agent: string; session: string; text: string };

export type StreamStatus = 'connecting' | 'live' | 'reconnecting';

export type EventStreamOptions = {
  onChange: (ev: ChangeEvent) => void;
  /** Streamed model text (`event: delta`). */
  onDelta?: (ev: DeltaEvent) => void;
  /** Called on every (re)connection after the first: events may have been missed. */
  onResync?: () => void;
  onStatus?: (status: StreamStatus) => void;
  /**
   * Called each time the browser gives up on a stream, before a new one is tried.
   * EventSource cannot see status codes: a refused token (401) looks just like a
   * server that went away, so ask the API to learn which.
   */
  onClosed?: () => void;
  url?: string;
  /** For tests: the EventSource constructor and the timer functions. */
  EventSourceImpl?: typeof EventSource;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (handle: unknown) => void;
};

const MAX_BACKOFF_MS = 10_000;

/** Parses the data of a `change` event; undefined when it is not one. */
export function parseChange(data: string): ChangeEvent | undefined {
  try {
    const v: unknown = JSON.parse(data);
    if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if (typeof o.workspace === 'string' && typeof o.kind === 'string') {
        const ev: ChangeEvent = { workspace: o.workspace, kind: o.kind };
        if (typeof o.id === 'string') ev.id = o.id;
        if (typeof o.agent === 'string') ev.agent = o.agent;
        if (typeof o.session === 'string') ev.session = o.session;
        if (typeof o.text === 'string') ev.text = o.text;
        return ev;
      }
    }
  } catch {
    // not JSON: ignored below
  }
  return undefined;
}

/** Parses the data of a `delta` event; undefined when it is not one. */
export function parseDelta(data: string): DeltaEvent | undefined {
  try {
    const v: unknown = JSON.parse(data);
    if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      const str = (k: string) => (typeof o[k] === 'string' ? (o[k] as string) : undefined);
      const [workspace, run, text] = [str('workspace'), str('run'), str('text')];
      if (workspace !== undefined && run && text !== undefined) {
        return { workspace, run, text, agent: str('agent') ?? '', session: str('session') ?? '' };
      }
    }
  } catch {
    // not JSON: ignored below
  }
  return undefined;
}

/**
 * Connects to the event stream and keeps it connected: the browser retries a
 * dropped stream by itself, and when it gives up (CLOSED) we open a new one with
 * a growing delay. Returns a function that stops it.
 */
export function connectEvents(opts: EventStreamOptions): () => void {
  const ES = opts.EventSourceImpl ?? EventSource;
  const setTimer = opts.setTimer ?? ((fn: () => void, ms: number) => setTimeout(fn, ms));
  const clearTimer = opts.clearTimer ?? ((h: unknown) => clearTimeout(h as ReturnType<typeof setTimeout>));
  const url = opts.url ?? '/api/events';

  let source: EventSource | undefined;
  let timer: unknown;
  let stopped = false;
  let connectedOnce = false;
  let failures = 0;

  const status = (s: StreamStatus) => opts.onStatus?.(s);

  const open = () => {
    timer = undefined;
    if (stopped) return;
    status(connectedOnce ? 'reconnecting' : 'connecting');
    const es = new ES(url, { withCredentials: true });
    source = es;
    es.addEventListener('open', () => {
      failures = 0;
      status('live');
      if (connectedOnce) opts.onResync?.();
      connectedOnce = true;
    });
    es.addEventListener('change', (e: Event) => {
      const ev = parseChange((e as MessageEvent<string>).data);
      if (ev) opts.onChange(ev);
    });
    es.addEventListener('delta', (e: Event) => {
      const ev = parseDelta((e as MessageEvent<string>).data);
      if (ev) opts.onDelta?.(ev);
    });
    es.addEventListener('error', () => {
      if (stopped || source !== es) return;
      status('reconnecting');
      if (es.readyState === ES.CLOSED) {
        es.close();
        source = undefined;
        failures++;
        const delay = Math.min(MAX_BACKOFF_MS, 500 * 2 ** Math.min(failures, 5));
        timer = setTimer(open, delay);
        opts.onClosed?.();
      }
    });
  };

  open();

  return () => {
    stopped = true;
    if (timer !== undefined) clearTimer(timer);
    source?.close();
    source = undefined;
  };
}
