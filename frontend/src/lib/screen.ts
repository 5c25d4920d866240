// The Desktop screen (pure): where the agent's page sits inside the panel
// (letterboxed) and how large the enlarged screen draws it, screen
// coordinates → the page's CSS pixels (toFrame, for every size), DOM input events →
// the input messages of the screen WebSocket, the socket's address, and the
// reconnect delays. See docs/http-api.md, "Desktop: each agent's browser".

export type Size = { width: number; height: number };
export type Rect = { left: number; top: number; width: number; height: number };
export type Point = { x: number; y: number };

/**
 * Where a frame of `frame` size shows inside a box of `box` size, as large as
 * it fits with its aspect ratio kept and centred (bars on the other axis).
 * The rect is relative to the box; empty when either size is.
 */
export function letterbox(box: Size, frame: Size): Rect {
  if (box.width <= 0 || box.height <= 0 || frame.width <= 0 || frame.height <= 0) {
    return { left: 0, top: 0, width: 0, height: 0 };
  }
  const scale = Math.min(box.width / frame.width, box.height / frame.height);
  const width = frame.width * scale;
  const height = frame.height * scale;
  return { left: (box.width - width) / 2, top: (box.height - height) / 2, width, height };
}

/**
 * A point on the page (clientX/Y) in the frame's CSS pixels, given the
 * element's box on the page (getBoundingClientRect) and the frame's size.
 * Off the picture (on a bar or outside), null, unless `clamp`: then the
 * nearest edge (a drag that leaves the screen still ends on the page).
 */
export function toFrame(client: Point, element: Rect, frame: Size, clamp = false): Point | null {
  const pic = letterbox(element, frame);
  if (pic.width === 0) return null;
  let x = ((client.x - element.left - pic.left) / pic.width) * frame.width;
  let y = ((client.y - element.top - pic.top) / pic.height) * frame.height;
  const inside = x >= 0 && y >= 0 && x < frame.width && y < frame.height;
  if (!inside && !clamp) return null;
  x = Math.min(Math.max(x, 0), frame.width - 0.01);
  y = Math.min(Math.max(y, 0), frame.height - 0.01);
  // Tenths of a pixel are all Chromium can use; shorter messages.
  return { x: Math.round(x * 10) / 10, y: Math.round(y * 10) / 10 };
}

/**
 * The size the enlarged screen draws a frame at inside a box: the page's
 * real size (1:1 CSS pixels) when it fits, else scaled down to fit with its
 * aspect ratio kept, never cropped and never scaled up. Whole pixels, never
 * more than the box. Empty when either size is.
 */
export function fitSize(box: Size, frame: Size): Size {
  if (box.width <= 0 || box.height <= 0 || frame.width <= 0 || frame.height <= 0) return { width: 0, height: 0 };
  const scale = Math.min(1, box.width / frame.width, box.height / frame.height);
  return {
    width: Math.min(box.width, Math.max(1, Math.round(frame.width * scale))),
    height: Math.min(box.height, Math.max(1, Math.round(frame.height * scale))),
  };
}

/** The inverse of toFrame: a point of the frame on the page (to aim a click in tests and to draw a cursor). */
export function fromFrame(p: Point, element: Rect, frame: Size): Point {
  const pic = letterbox(element, frame);
  return {
    x: element.left + pic.left + (p.x / frame.width) * pic.width,
    y: element.top + pic.top + (p.y / frame.height) * pic.height,
  };
}

/**
 * The pixel size of a canvas's backing store for a CSS size on a screen of
 * this devicePixelRatio, so frames stay sharp on a high-density display.
 */
export function backingSize(css: Size, dpr: number): Size {
  const r = dpr > 0 && Number.isFinite(dpr) ? dpr : 1;
  return { width: Math.max(1, Math.round(css.width * r)), height: Math.max(1, Math.round(css.height * r)) };
}

// ---- input ----

export type Button = 'left' | 'middle' | 'right';

/** One input message of the person (docs/http-api.md); only sent while they hold the browser. */
export type ScreenInput =
  | { type: 'mousemove'; x: number; y: number; modifiers?: number }
  | { type: 'mousedown' | 'mouseup' | 'click'; x: number; y: number; button: Button; click_count: number; modifiers?: number }
  | { type: 'wheel'; x: number; y: number; delta_x: number; delta_y: number; modifiers?: number }
  | { type: 'keydown' | 'keyup'; key: string; code: string; modifiers?: number }
  | { type: 'type'; text: string };

/** Modifier bits of an input message. */
export const MOD = { alt: 1, ctrl: 2, meta: 4, shift: 8 } as const;

type Mods = { altKey: boolean; ctrlKey: boolean; metaKey: boolean; shiftKey: boolean };

/** The modifiers bitmask of a DOM event: alt 1, ctrl 2, meta 4, shift 8. */
export function modifiers(e: Mods): number {
  return (e.altKey ? MOD.alt : 0) | (e.ctrlKey ? MOD.ctrl : 0) | (e.metaKey ? MOD.meta : 0) | (e.shiftKey ? MOD.shift : 0);
}

/** MouseEvent.button → the button's name; other buttons (back, forward): null. */
export function buttonName(button: number): Button | null {
  return button === 0 ? 'left' : button === 1 ? 'middle' : button === 2 ? 'right' : null;
}

const withMods = <T extends object>(msg: T, mods: number): T & { modifiers?: number } => (mods ? { ...msg, modifiers: mods } : msg);

/** A mousedown or mouseup at a frame point. detail is the DOM event's (2 on a double click's second press). */
export function mouseMessage(
  type: 'mousedown' | 'mouseup',
  p: Point,
  e: Mods & { button: number; detail: number },
): ScreenInput | null {
  const button = buttonName(e.button);
  if (!button) return null;
  return withMods({ type, x: p.x, y: p.y, button, click_count: Math.max(1, e.detail || 1) }, modifiers(e));
}

export function moveMessage(p: Point, e: Mods): ScreenInput {
  return withMods({ type: 'mousemove' as const, x: p.x, y: p.y }, modifiers(e));
}

/** WheelEvent.deltaMode: pixels, lines or pages. */
const LINE_PX = 40;

/** A wheel turn at a frame point, its deltas in CSS pixels of the page (lines and pages converted). */
export function wheelMessage(p: Point, e: Mods & { deltaX: number; deltaY: number; deltaMode: number }, frame: Size): ScreenInput {
  const unit = e.deltaMode === 1 ? LINE_PX : e.deltaMode === 2 ? frame.height : 1;
  return withMods(
    { type: 'wheel' as const, x: p.x, y: p.y, delta_x: Math.round(e.deltaX * unit), delta_y: Math.round(e.deltaY * unit) },
    modifiers(e),
  );
}

type KeyLike = Mods & { key: string; code: string; isComposing?: boolean };

/**
 * A keydown or keyup for the page; null for what is not a key of its own:
 * keys of an input method composing text (its text comes as one `type` message
 * at the end) and "Dead"/"Process"/"Unidentified" keys.
 */
export function keyMessage(type: 'keydown' | 'keyup', e: KeyLike): ScreenInput | null {
  if (e.isComposing || e.key === 'Dead' || e.key === 'Process' || e.key === 'Unidentified' || e.key === '') return null;
  return withMods({ type, key: e.key, code: e.code }, modifiers(e));
}

/** Ctrl+V (Cmd+V on a Mac): pasting is left to the panel's paste event, which sends the text itself. */
export function isPaste(e: KeyLike): boolean {
  return (e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === 'v';
}

// ---- the socket ----

/** A text message of the screen socket: a frame's header (its JPEG comes next, binary), the browser's state, or a refused input. */
export type FrameHeader = { type: 'frame'; width: number; height: number; url: string; title: string };
export type ScreenMessage = FrameHeader | { type: 'state'; state: Record<string, unknown> } | { type: 'error'; message: string };

/** Parses a text message; undefined for anything else (the socket ignores it). */
export function parseMessage(data: string): ScreenMessage | undefined {
  let v: unknown;
  try {
    v = JSON.parse(data);
  } catch {
    return undefined;
  }
  if (!v || typeof v !== 'object') return undefined;
  const o = v as Record<string, unknown>;
  if (o.type === 'frame') {
    const width = Number(o.width);
    const height = Number(o.height);
    if (!(width > 0 && height > 0)) return undefined;
    return { type: 'frame', width, height, url: typeof o.url === 'string' ? o.url : '', title: typeof o.title === 'string' ? o.title : '' };
  }
  if (o.type === 'state') {
    const { type: _, ...state } = o;
    return { type: 'state', state };
  }
  if (o.type === 'error' && typeof o.message === 'string' && o.message) return { type: 'error', message: o.message };
  return undefined;
}

/**
 * The screen socket's address. A page served over http(s) by Rerun itself
 * reaches it relative to the page (same host, same cookie). The desktop
 * window's page is not (wails://wails, or http://wails.localhost on Windows):
 * its WebSocket must go to the real local server (localUrl, from /api/info),
 * with a token since the window's cookie does not travel there.
 */
export function screenSocketUrl(path: string, page: { href: string; protocol: string; hostname: string }, localUrl = '', token = ''): string {
  const direct = !needsLocalUrl(page);
  const base = direct || !localUrl ? page.href : localUrl.replace(/\/?$/, '/');
  const u = new URL(path.replace(/^\//, ''), base);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  if (!direct && token) u.searchParams.set('token', token);
  return u.toString();
}

/** Whether the page must reach the screen through the local server's address (see screenSocketUrl). */
export function needsLocalUrl(page: { protocol: string; hostname: string }): boolean {
  return !((page.protocol === 'http:' || page.protocol === 'https:') && page.hostname !== 'wails.localhost');
}

/** The wait before reconnect attempt n (0-based): 0.5 s doubling to 10 s, jitter in [0, 1) adding up to a fifth. */
export function backoff(attempt: number, jitter = 0, baseMs = 500, maxMs = 10_000): number {
  const n = Math.max(0, Math.floor(attempt));
  const d = Math.min(maxMs, baseMs * 2 ** Math.min(n, 30));
  return Math.round(d * (1 + Math.min(Math.max(jitter, 0), 1) * 0.2));
}
