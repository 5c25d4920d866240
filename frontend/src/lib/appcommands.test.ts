import { afterEach, describe, expect, it, vi } from 'vitest';
import { registerAppCommands, type AppCommandContext } from './appcommands';
import { CommandRegistry, type Found } from './commands';
import { stepFocus } from './stepfocus.svelte';
import type { Agent } from './workspace';

afterEach(() => vi.unstubAllGlobals());

function context(openTab: AppCommandContext['openTab']): AppCommandContext {
  const noop = () => {};
  return {
    wsId: () => 'ws_1',
    agents: () => [{ id: 'ag_1', name: 'Ada', handle: 'ada', box_id: 'bx_1' } as Agent],
    boxes: () => [],
    selected: () => undefined,
    held: () => false,
    openAgent: noop,
    openTab,
    newAgent: noop,
    newBox: noop,
    toggleHold: noop,
    openBrain: noop,
    openTemplates: noop,
    settings: () => [],
    fit: noop,
    zoomIn: noop,
    zoomOut: noop,
    undo: noop,
  };
}

describe('the palette’s run search', () => {
  it('shows server hits in the server’s order and opens a hit’s run at its step', async () => {
    const urls: string[] = [];
    vi.stubGlobal('fetch', async (url: string) => {
      urls.push(url);
      if (!url.includes('/search')) return new Response('[]', { status: 200 });
      const hits = [
        { n: 5, kind: 'step', agent_id: 'ag_1', run_id: 'rn_9', seq: 4, source: 'chat', at: '2026-12-01T10:00:00Z', snippet: 'sent the\n invoice' },
        { n: 4, kind: 'notification', agent_id: 'ag_1', notification_id: 'nt_1', at: '2026-12-01T09:00:00Z', snippet: 'no run' },
      ];
      return new Response(JSON.stringify({ hits, terms: ['invoice'], more: false }), { status: 200 });
    });
    const opened: unknown[] = [];
    const reg = new CommandRegistry();
    registerAppCommands(reg, context((...args) => opened.push(args)));

    let found: Found[] = [];
    await reg.search('invoice', new AbortController().signal, (f) => (found = f));
    const mine = found.filter((f) => f.group === 'Found in runs');
    expect(urls.some((u) => u === '/api/workspaces/ws_1/search?q=invoice&limit=8')).toBe(true);
    expect(mine.map((f) => [f.command.label, f.command.hint])).toEqual([['sent the invoice', 'Ada · Step 4 · chat']]);

    await mine[0]!.command.run();
    expect(opened).toEqual([['ag_1', 'logs', 'rn_9']]);
    expect(stepFocus.take('rn_9')).toBe(4);
  });

  it('does not search for one character', async () => {
    const urls: string[] = [];
    vi.stubGlobal('fetch', async (url: string) => {
      urls.push(url);
      return new Response('[]', { status: 200 });
    });
    const reg = new CommandRegistry();
    registerAppCommands(reg, context(() => {}));
    await reg.search('i', new AbortController().signal, () => {});
    expect(urls.filter((u) => u.includes('/search'))).toEqual([]);
  });
});
