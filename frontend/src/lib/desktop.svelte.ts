// The screen WebSocket of one agent's browser: its JPEG frames (each after a
// text header with its size, URL and title), its state, and the person's input
// while they hold the browser. Reconnects with a growing delay when it drops.
import { api } from './api';
import { readState } from './desktop';
import { backoff, needsLocalUrl, parseMessage, screenSocketUrl, type FrameHeader, type ScreenInput } from './screen';
import type { BrowserState } from './desktop';

export type SocketStatus = 'closed' | 'connecting' | 'live' | 'reconnecting';
export type Frame = { header: FrameHeader; data: Blob };

type Timer = unknown;

export type ScreenSocketOptions = {
  /** The socket's full address (default: screenAddress). */
  address?: (path: string) => Promise<string>;
  /** Called each time the socket drops, before the next try: the owner may ask the API why (a 401 signs the page out). */
  onDropped?: () => void;
  /** For tests. */
  WebSocketImpl?: typeof WebSocket;
  setTimer?: (fn: () => void, ms: number) => Timer;
  clearTimer?: (t: Timer) => void;
  random?: () => number;
};

let info: Promise<{ local_url: string; screen_token?: string }> | undefined;

/**
 * The full ws:// address of a screen path. A page served by Rerun uses its own
 * origin and cookie; the desktop window asks /api/info for the local server's
 * address and a token for it (its own requests get the token from the window,
 * a WebSocket to another origin does not).
 */
export async function screenAddress(path: string): Promise<string> {
  if (!needsLocalUrl(location)) return screenSocketUrl(path, location);
  info ??= api.info().catch((err) => {
    info = undefined;
    throw err;
  });
  const i = await info;
  return screenSocketUrl(path, location, i.local_url, i.screen_token ?? '');
}

export class ScreenSocket {
  status = $state<SocketStatus>('closed');
  /** The browser's state as the socket last told it; null before the first. */
  state = $state<BrowserState | null>(null);
  /** The last frame's header: the page's size in CSS pixels, its URL and title. */
  header = $state<FrameHeader | null>(null);
  /** The server's last refusal of an input (cleared by the next state); '' when none. */
  error = $state('');

  private readonly path: string;
  private readonly opts: ScreenSocketOptions;
  private ws: WebSocket | undefined;
  private pending: FrameHeader | undefined;
  private attempt = 0;
  private timer: Timer;
  private wanted = false;
  private listeners = new Set<(f: Frame) => void>();
  /** The newest frame, for a view that opens meanwhile (a still page sends no more). */
  private last: Frame | null = null;

  constructor(path: string, opts: ScreenSocketOptions = {}) {
    this.path = path;
    this.opts = opts;
  }

  /** Connects (and keeps reconnecting) until close(). */
  open() {
    if (this.wanted) return;
    this.wanted = true;
    this.attempt = 0;
    void this.connect();
  }

  /** Disconnects for good (open() starts again). */
  close() {
    this.wanted = false;
    if (this.timer !== undefined) (this.opts.clearTimer ?? ((t) => clearTimeout(t as ReturnType<typeof setTimeout>)))(this.timer);
    this.timer = undefined;
    const ws = this.ws;
    this.ws = undefined;
    ws?.close();
    this.last = null;
    this.status = 'closed';
    this.error = '';
  }

  /** Calls fn with every frame, the newest one first when there is one; returns the unsubscribe. */
  onFrame(fn: (f: Frame) => void): () => void {
    this.listeners.add(fn);
    if (this.last) fn(this.last);
    return () => void this.listeners.delete(fn);
  }

  /** Sends one input of the person; false when the socket is not open. */
  send(msg: ScreenInput): boolean {
    const ws = this.ws;
    if (!ws || ws.readyState !== 1) return false;
    ws.send(JSON.stringify(msg));
    return true;
  }

  private async connect() {
    this.status = this.attempt === 0 ? 'connecting' : 'reconnecting';
    let url: string;
    try {
      url = await (this.opts.address ?? screenAddress)(this.path);
    } catch {
      this.retry();
      return;
    }
    if (!this.wanted) return;
    const WS = this.opts.WebSocketImpl ?? WebSocket;
    let ws: WebSocket;
    try {
      ws = new WS(url);
    } catch {
      this.retry();
      return;
    }
    ws.binaryType = 'blob';
    this.ws = ws;
    this.pending = undefined;
    ws.onmessage = (e: MessageEvent) => {
      if (this.ws !== ws) return;
      if (this.attempt !== 0) this.attempt = 0;
      if (this.status !== 'live') this.status = 'live';
      this.receive(e.data);
    };
    ws.onopen = () => {
      if (this.ws === ws) this.status = 'live';
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = undefined;
      this.opts.onDropped?.();
      this.retry();
    };
  }

  private retry() {
    if (!this.wanted) return;
    this.status = 'reconnecting';
    const wait = backoff(this.attempt++, (this.opts.random ?? Math.random)());
    this.timer = (this.opts.setTimer ?? ((fn, ms) => setTimeout(fn, ms)))(() => {
      this.timer = undefined;
      if (this.wanted) void this.connect();
    }, wait);
  }

  private receive(data: unknown) {
    if (typeof data === 'string') {
      const m = parseMessage(data);
      if (m?.type === 'state') {
        this.state = readState(m.state);
        this.error = '';
      } else if (m?.type === 'frame') this.pending = m;
      else if (m?.type === 'error') this.error = m.message;
      return;
    }
    if (!(data instanceof Blob)) return;
    const header = this.pending ?? this.header;
    this.pending = undefined;
    if (!header) return; // a picture of unknown size cannot be mapped
    const h = this.header;
    if (!h || h.width !== header.width || h.height !== header.height || h.url !== header.url || h.title !== header.title) {
      this.header = header;
    }
    const f = { header, data };
    this.last = f;
    for (const fn of this.listeners) fn(f);
  }
}
