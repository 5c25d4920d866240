// The command palette's built-in providers: actions, coworkers, the open
// coworker's tabs and runs, Brain pages, settings, and the keyboard shortcuts.
import { api } from './api';
import type { Command, CommandRegistry } from './commands';
import { modKey } from './keys';
import { PANEL_TABS } from './paneltabs';
import { hitLabel } from './search';
import { stepFocus } from './stepfocus.svelte';
import type { Agent, Box } from './workspace';

export type AppCommandContext = {
  wsId: () => string;
  agents: () => Agent[];
  boxes: () => Box[];
  selected: () => Agent | undefined;
  held: () => boolean;
  openAgent: (agent: Agent) => void;
  openTab: (agentId: string, tab: string, run?: string) => void;
  newAgent: () => void;
  newBox: () => void;
  toggleHold: () => void;
  openBrain: (pageId?: string) => void;
  openTemplates: () => void;
  settings: () => { label: string; hint?: string; action: () => void }[];
  fit: () => void;
  zoomIn: () => void;
  zoomOut: () => void;
  undo: () => void;
};

/** The keys the app answers to, for the palette's "Keyboard shortcuts" group. */
export function shortcuts(mac?: boolean): { keys: string; what: string }[] {
  return [
    { keys: modKey('K', mac), what: 'Command palette' },
    { keys: modKey('Z', mac), what: 'Undo the last move' },
    { keys: '+ / −', what: 'Zoom the board in / out' },
    { keys: '0', what: 'Fit the board to the window' },
    { keys: `${modKey('', mac)}wheel / pinch`, what: 'Zoom around the pointer' },
    { keys: 'Enter', what: 'Open the focused coworker' },
    { keys: 'Shift+F10', what: 'The focused coworker’s or box’s menu' },
    { keys: '← →', what: 'Next panel tab (on a tab)' },
    { keys: 'F', what: 'Enlarge the Desktop screen (on the Desktop tab)' },
    { keys: 'Esc', what: 'Close a menu, dialog or the panel' },
  ];
}

/** Registers the built-in providers; returns their removal. */
export function registerAppCommands(reg: CommandRegistry, c: AppCommandContext): () => void {
  const offs = [
    reg.register({
      id: 'actions',
      group: 'Actions',
      order: 0,
      items: (): Command[] => [
        { id: 'action:new-agent', label: 'New coworker…', keywords: 'add agent create', disabled: c.boxes().length === 0, run: c.newAgent },
        { id: 'action:new-box', label: 'New box…', keywords: 'add group create', run: c.newBox },
        {
          id: 'action:hold',
          label: c.held() ? 'Resume all coworkers' : 'Pause all coworkers',
          keywords: 'hold stop resume',
          run: c.toggleHold,
        },
        { id: 'action:brain', label: 'Search the Brain…', keywords: 'pages company find', run: () => c.openBrain() },
        { id: 'action:templates', label: 'Templates…', keywords: 'install import export', run: c.openTemplates },
        { id: 'action:fit', label: 'Fit the board to the window', keywords: 'zoom view all', shortcut: '0', run: c.fit },
        { id: 'action:zoom-in', label: 'Zoom in', keywords: 'bigger', shortcut: '+', run: c.zoomIn },
        { id: 'action:zoom-out', label: 'Zoom out', keywords: 'smaller', shortcut: '−', run: c.zoomOut },
        { id: 'action:undo', label: 'Undo the last move', keywords: 'back revert', shortcut: modKey('Z'), run: c.undo },
      ],
    }),
    reg.register({
      id: 'agents',
      group: 'Coworkers',
      order: 10,
      items: (): Command[] => {
        const boxes = new Map(c.boxes().map((b) => [b.id, b.name]));
        return c.agents().map((a) => ({
          id: `agent:${a.id}`,
          label: a.name,
          hint: `@${a.handle}${boxes.get(a.box_id) ? ` · ${boxes.get(a.box_id)}` : ''}`,
          keywords: a.handle,
          run: () => c.openAgent(a),
        }));
      },
    }),
    reg.register({
      id: 'tabs',
      group: 'Panel tabs',
      order: 20,
      items: (): Command[] => {
        const a = c.selected();
        if (!a) return [];
        return PANEL_TABS.map((t) => ({
          id: `tab:${t.id}`,
          label: t.label,
          hint: `${a.name}’s panel`,
          keywords: t.keywords,
          run: () => c.openTab(a.id, t.id),
        }));
      },
    }),
    reg.register({
      id: 'runs',
      group: 'Runs',
      order: 30,
      items: async (): Promise<Command[]> => {
        const a = c.selected();
        if (!a) return [];
        const runs = await api.listRuns(c.wsId(), a.id, 20);
        return runs.map((r) => ({
          id: `run:${r.id}`,
          label: firstLine(r.input) || `Run ${r.id.slice(-6)}`,
          hint: `${a.name} · ${r.status} · ${r.source}`,
          keywords: `${r.status} ${r.source} ${r.output}`.slice(0, 400),
          run: () => c.openTab(a.id, 'logs', r.id),
        }));
      },
    }),
    reg.register({
      id: 'search',
      group: 'Found in runs',
      order: 35,
      minQuery: 2,
      ranked: true,
      items: async (query): Promise<Command[]> => {
        const r = await api.search(c.wsId(), { q: query, limit: 8 });
        const names = new Map(c.agents().map((a) => [a.id, a.name]));
        return r.hits.flatMap((h) => {
          const run = h.run_id;
          if (!run) return [];
          return [
            {
              id: `search:${h.n}`,
              label: oneLine(h.snippet) || hitLabel(h),
              hint: `${names.get(h.agent_id) ?? 'A coworker'} · ${hitLabel(h)}`,
              run: () => {
                stepFocus.set(run, h.seq);
                c.openTab(h.agent_id, 'logs', run);
              },
            },
          ];
        });
      },
    }),
    reg.register({
      id: 'brain',
      group: 'Brain pages',
      order: 40,
      minQuery: 1,
      items: async (): Promise<Command[]> => {
        const pages = await api.listBrain(c.wsId());
        return pages.map((p) => ({
          id: `brain:${p.id}`,
          label: p.title || p.slug,
          hint: p.summary,
          keywords: p.slug,
          run: () => c.openBrain(p.id),
        }));
      },
    }),
    reg.register({
      id: 'settings',
      group: 'Settings',
      order: 50,
      items: (): Command[] =>
        c.settings().map((s) => ({ id: `settings:${s.label}`, label: s.label, hint: s.hint, keywords: 'settings preferences', run: s.action })),
    }),
    reg.register({
      id: 'shortcuts',
      group: 'Keyboard shortcuts',
      order: 90,
      limit: 20,
      items: (): Command[] =>
        shortcuts().map((s) => ({ id: `key:${s.what}`, label: s.what, shortcut: s.keys, keywords: 'keyboard shortcut keys help', run: () => {} })),
    }),
  ];
  return () => offs.forEach((off) => off());
}

function firstLine(s: string): string {
  const line = s.trim().split('\n')[0] ?? '';
  return line.length > 80 ? line.slice(0, 79) + '…' : line;
}

/** A snippet on one line, short enough for the palette. */
function oneLine(s: string): string {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > 90 ? t.slice(0, 89) + '…' : t;
}
