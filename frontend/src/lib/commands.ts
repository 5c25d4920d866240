// The command palette's items come from providers: each gives the items of one
// group (coworkers, panel tabs, runs, Brain pages, settings, actions, …) for a
// query. Register one with `commands.register(provider)`; it may answer late
// (a server search) and the palette shows its items when they arrive.

export type Command = {
  /** Unique across providers (the provider's id is a good prefix). */
  id: string;
  label: string;
  /** A second line or right-hand note ("@ada · Sales"). */
  hint?: string;
  /** More words that should find it ("schedule cron" for Automations). */
  keywords?: string;
  /** A key that does it outside the palette too ("Ctrl+Z"). */
  shortcut?: string;
  /** Shown but not choosable (with its hint saying why). */
  disabled?: boolean;
  run: () => void | Promise<void>;
};

export type CommandProvider = {
  id: string;
  /** The group's heading in the palette. */
  group: string;
  /** Lower comes first when scores tie (actions before coworkers, say). */
  order?: number;
  /** Items for the query ('' for a first look: keep that short). */
  items: (query: string, signal: AbortSignal) => Command[] | Promise<Command[]>;
  /** Ask only when the query is at least this long (a full-text search: 2). */
  minQuery?: number;
  /** The provider filters itself (a server search): its items skip the fuzzy match. */
  ranked?: boolean;
  /** How many of its items show at most (default: the search's limit per group). */
  limit?: number;
};

export type Found = { command: Command; group: string; score: number; order: number };

/**
 * How well `query` matches `text`: 0 for no match; higher is better. Every
 * query character must appear in order; a whole-word start, a prefix and
 * consecutive runs score higher.
 */
export function matchScore(query: string, text: string): number {
  const q = query.trim().toLowerCase();
  if (!q) return 1;
  const t = text.toLowerCase();
  if (t === q) return 1000;
  if (t.startsWith(q)) return 800 - t.length;
  const at = t.indexOf(q);
  if (at >= 0) return (/[\s@/·(-]/.test(t[at - 1] ?? ' ') ? 600 : 400) - at;
  let score = 0;
  let ti = 0;
  let run = 0;
  for (const ch of q) {
    if (ch === ' ') continue;
    const found = t.indexOf(ch, ti);
    if (found < 0) return 0;
    run = found === ti ? run + 1 : 0;
    score += 2 + run * 3 + (found === 0 || /[\s@/·(-]/.test(t[found - 1]!) ? 6 : 0);
    ti = found + 1;
  }
  return Math.min(score, 300);
}

/** The best score of a command's label, hint and keywords (the label counts most). */
export function commandScore(query: string, c: Command): number {
  if (!query.trim()) return 1;
  return Math.max(
    matchScore(query, c.label),
    Math.floor(matchScore(query, c.hint ?? '') * 0.6),
    Math.floor(matchScore(query, c.keywords ?? '') * 0.7),
  );
}

export class CommandRegistry {
  private providers: CommandProvider[] = [];

  /** Adds a provider (replacing one with the same id); returns its removal. */
  register(p: CommandProvider): () => void {
    this.providers = [...this.providers.filter((x) => x.id !== p.id), p];
    return () => {
      this.providers = this.providers.filter((x) => x !== p);
    };
  }

  get ids(): string[] {
    return this.providers.map((p) => p.id);
  }

  /**
   * Asks every provider; `onResults` gets the merged, ranked list each time
   * one more answers (synchronous ones first). A provider that fails is left out.
   */
  search(query: string, signal: AbortSignal, onResults: (found: Found[], pending: number) => void, limitPerGroup = 8): Promise<void> {
    const byProvider = new Map<string, Found[]>();
    const asked = this.providers.filter((p) => query.trim().length >= (p.minQuery ?? 0));
    let pending = asked.length;
    const emit = () => {
      if (signal.aborted) return;
      const all = asked.flatMap((p) => byProvider.get(p.id) ?? []);
      onResults(rankFound(all), pending);
    };
    const take = (p: CommandProvider, items: Command[]) => {
      const found = items
        .map((command, i) => ({
          command,
          group: p.group,
          order: p.order ?? 50,
          score: p.ranked ? 500 - i : commandScore(query, command),
        }))
        .filter((f) => f.score > 0)
        .sort((a, b) => b.score - a.score)
        .slice(0, p.limit ?? limitPerGroup);
      byProvider.set(p.id, found);
    };
    const waits: Promise<void>[] = [];
    for (const p of asked) {
      let got: Command[] | Promise<Command[]>;
      try {
        got = p.items(query, signal);
      } catch {
        got = [];
      }
      if (Array.isArray(got)) {
        take(p, got);
        pending--;
      } else {
        waits.push(
          got
            .then((items) => take(p, items))
            .catch(() => {})
            .finally(() => {
              pending--;
              emit();
            }),
        );
      }
    }
    emit();
    return Promise.all(waits).then(() => {});
  }
}

/** Groups stay together, ordered by their best item (then the provider's order). */
export function rankFound(all: Found[]): Found[] {
  const best = new Map<string, { score: number; order: number }>();
  for (const f of all) {
    const b = best.get(f.group);
    if (!b || f.score > b.score) best.set(f.group, { score: f.score, order: f.order });
  }
  const groupRank = (g: string) => best.get(g)!;
  return [...all].sort((a, b) => {
    if (a.group !== b.group) {
      const ga = groupRank(a.group);
      const gb = groupRank(b.group);
      return gb.score - ga.score || ga.order - gb.order || a.group.localeCompare(b.group);
    }
    return b.score - a.score;
  });
}

/** The app's one registry: App.svelte registers the built-in providers. */
export const commands = new CommandRegistry();
