import { describe, expect, it } from 'vitest';
import { CommandRegistry, commandScore, matchScore, rankFound, type Command, type Found } from './commands';

const cmd = (label: string, extra: Partial<Command> = {}): Command => ({ id: label, label, run: () => {}, ...extra });

describe('matchScore', () => {
  it('prefers exact, then prefix, then word start, then inside, then scattered', () => {
    const exact = matchScore('ada', 'ada');
    const prefix = matchScore('ada', 'Ada Lovelace');
    const word = matchScore('love', 'Ada Lovelace');
    const inside = matchScore('vel', 'Ada Lovelace');
    const scattered = matchScore('adl', 'Ada Lovelace');
    expect(exact).toBeGreaterThan(prefix);
    expect(prefix).toBeGreaterThan(word);
    expect(word).toBeGreaterThan(inside);
    expect(inside).toBeGreaterThan(scattered);
    expect(scattered).toBeGreaterThan(0);
  });
  it('is 0 when a character is missing or out of order', () => {
    expect(matchScore('xyz', 'Ada')).toBe(0);
    expect(matchScore('ad', 'da')).toBe(0);
  });
  it('an empty query matches everything', () => {
    expect(matchScore('  ', 'anything')).toBe(1);
  });
});

describe('commandScore', () => {
  it('finds by keywords and hint, the label counting most', () => {
    const auto = cmd('Automations', { keywords: 'schedules triggers cron' });
    expect(commandScore('cron', auto)).toBeGreaterThan(0);
    expect(commandScore('auto', auto)).toBeGreaterThan(commandScore('cron', auto));
    expect(commandScore('@ada', cmd('Ada', { hint: '@ada · Sales' }))).toBeGreaterThan(0);
  });
});

describe('CommandRegistry', () => {
  it('merges providers, ranks, and drops what does not match', async () => {
    const r = new CommandRegistry();
    r.register({ id: 'a', group: 'Coworkers', items: () => [cmd('Ada'), cmd('Bob')] });
    r.register({ id: 'b', group: 'Actions', order: 0, items: () => [cmd('New box'), cmd('Pause all')] });
    let last: Found[] = [];
    await r.search('bo', new AbortController().signal, (f) => (last = f));
    expect(last.map((f) => f.command.label)).toEqual(['Bob', 'New box']);
  });
  it('shows quick answers first and adds a slow provider when it answers', async () => {
    const r = new CommandRegistry();
    let release!: (c: Command[]) => void;
    r.register({ id: 'fast', group: 'Actions', items: () => [cmd('Search')] });
    r.register({ id: 'slow', group: 'Runs', ranked: true, minQuery: 2, items: () => new Promise<Command[]>((res) => (release = res)) });
    const seen: [string[], number][] = [];
    const done = r.search('se', new AbortController().signal, (f, pending) => seen.push([f.map((x) => x.command.label), pending]));
    release([cmd('run 1: sent the report'), cmd('run 2')]);
    await done;
    expect(seen[0]).toEqual([['Search'], 1]);
    expect(seen.at(-1)).toEqual([['Search', 'run 1: sent the report', 'run 2'], 0]);
  });
  it('asks a provider only from its minimum query length, and skips failing ones', async () => {
    const r = new CommandRegistry();
    let asked = 0;
    r.register({ id: 'slow', group: 'Runs', minQuery: 2, items: () => (asked++, []) });
    r.register({ id: 'bad', group: 'Bad', items: () => Promise.reject(new Error('down')) });
    r.register({ id: 'worse', group: 'Worse', items: () => { throw new Error('boom'); } });
    let last: Found[] = [cmd('x') as never];
    await r.search('a', new AbortController().signal, (f) => (last = f));
    expect(asked).toBe(0);
    expect(last).toEqual([]);
  });
  it('an aborted search reports nothing more', async () => {
    const r = new CommandRegistry();
    r.register({ id: 'slow', group: 'Runs', items: () => Promise.resolve([cmd('late')]) });
    const ac = new AbortController();
    const calls: number[] = [];
    const p = r.search('', ac.signal, (_f, pending) => calls.push(pending));
    ac.abort();
    await p;
    expect(calls).toEqual([1]);
  });
  it('register replaces by id and returns the removal', () => {
    const r = new CommandRegistry();
    r.register({ id: 'a', group: 'A', items: () => [] });
    const off = r.register({ id: 'a', group: 'A2', items: () => [] });
    expect(r.ids).toEqual(['a']);
    off();
    expect(r.ids).toEqual([]);
  });
});

describe('rankFound', () => {
  it('keeps groups together, best group first', () => {
    const f = (label: string, group: string, score: number): Found => ({ command: cmd(label), group, score, order: 50 });
    expect(rankFound([f('a', 'G1', 10), f('b', 'G2', 90), f('c', 'G1', 50)]).map((x) => x.command.label)).toEqual(['b', 'c', 'a']);
  });
});
