// An agent's browser as the Desktop tab and the grid read it (pure): its state
// from the wire, the one line saying who has it, which agents have one, and
// what its address bar shows and sends.
import type { Agent } from './workspace';

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

export const NOT_STARTED: BrowserState = {
  running: false,
  url: '',
  title: '',
  tabs: [],
  in_control: false,
  waiting: false,
  last_action: '',
  last_action_at: null,
  can_go_back: false,
  can_go_forward: false,
};

const str = (v: unknown) => (typeof v === 'string' ? v : '');

/** A state message of the screen socket (or an API answer) as a whole BrowserState; missing fields take their zero. */
export function readState(o: Record<string, unknown>): BrowserState {
  const tabs = Array.isArray(o.tabs)
    ? o.tabs
        .filter((t): t is Record<string, unknown> => !!t && typeof t === 'object')
        .map((t): BrowserTab => ({ id: typeof t.id === 'number' ? String(t.id) : str(t.id), url: str(t.url), title: str(t.title), active: t.active === true }))
    : [];
  return {
    running: o.running === true,
    url: str(o.url),
    title: str(o.title),
    tabs,
    in_control: o.in_control === true,
    waiting: o.waiting === true,
    last_action: str(o.last_action),
    last_action_at: typeof o.last_action_at === 'string' && o.last_action_at && !o.last_action_at.startsWith('0001-') ? o.last_action_at : null,
    can_go_back: o.can_go_back === true,
    can_go_forward: o.can_go_forward === true,
  };
}

export type Holder = 'off' | 'agent' | 'you' | 'waiting';

/** Who has the browser, and the line that says it. */
export function holder(s: BrowserState | null, agentName: string): { who: Holder; text: string } {
  if (!s || !s.running) return { who: 'off', text: 'Browser not started' };
  if (s.in_control && s.waiting) return { who: 'waiting', text: `Waiting: you have the browser` };
  if (s.in_control) return { who: 'you', text: 'You have the browser' };
  return { who: 'agent', text: `${agentName} is using its browser` };
}

/** The agents that may have a browser (the capability is on). */
export const browserAgents = (agents: Agent[]) => agents.filter((a) => a.capabilities.includes('browser'));

/** "https://a.example/x" → "a.example/x": the address bar's short form. */
export function shortUrl(url: string): string {
  if (!url || url === 'about:blank') return url;
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return url;
    const rest = `${u.pathname === '/' ? '' : u.pathname}${u.search}${u.hash}`;
    return `${u.host}${rest}`;
  } catch {
    return url;
  }
}

/** "just now", "12 s ago", "3 min ago", "2 h ago" (when the agent last acted). */
export function ago(at: string | null, now: number): string {
  if (!at) return '';
  const t = Date.parse(at);
  if (!Number.isFinite(t)) return '';
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 5) return 'just now';
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  return `${Math.floor(s / 3600)} h ago`;
}

/** What the address bar shows for the tab's address: all of it (the scheme tells http from https), nothing for a blank tab. */
export function addressOf(url: string): string {
  return !url || url === 'about:blank' ? '' : url;
}

/**
 * What the address bar sends for what was typed: trimmed, or null when there
 * is nothing to go to. The server reads the address (a bare host gets
 * https://) and refuses what the browser must not open, saying what to type.
 */
export function typedAddress(text: string): BrowserNav | null {
  const url = text.trim();
  return url ? { action: 'go', url } : null;
}
