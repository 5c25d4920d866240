// Search as you type (pure): asks wait for a pause in the typing, and only the
// answer to the newest ask is taken, so a slow answer to an older one never
// overwrites a newer one.

export type LatestSearch<Q> = {
  /** Asks for q after the pause (at once with now). */
  search(q: Q, opts?: { now?: boolean }): void;
  /** Forgets the waiting ask and any answer still on its way. */
  cancel(): void;
};

export function latestSearch<Q, R>(
  ask: (q: Q) => Promise<R>,
  handlers: { answer: (r: R, q: Q) => void; error: (err: unknown, q: Q) => void },
  pauseMs: number,
): LatestSearch<Q> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Counts asks: an answer is taken only while its ask is still the newest.
  let newest = 0;

  async function run(q: Q, n: number) {
    try {
      const r = await ask(q);
      if (n === newest) handlers.answer(r, q);
    } catch (err) {
      if (n === newest) handlers.error(err, q);
    }
  }

  return {
    search(q, opts) {
      clearTimeout(timer);
      const n = ++newest;
      timer = setTimeout(() => void run(q, n), opts?.now ? 0 : pauseMs);
    },
    cancel() {
      clearTimeout(timer);
      newest++;
    },
  };
}
