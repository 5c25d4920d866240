/**
 * Tells the server, once per page, that the board has painted: two frames
 * after the workspace's data is on screen. The server logs it ("ui board
 * painted", with the time since the page opened): make bench times a
 * launch by that line, and it is a clue when a start feels slow.
 */
let sent = false;

export function reportPainted(
  send: (pageMs: number) => Promise<unknown>,
  frame: (cb: () => void) => void = (cb) => requestAnimationFrame(() => cb()),
  now: () => number = () => performance.now(),
): void {
  if (sent) return;
  sent = true;
  frame(() =>
    frame(() => {
      const ms = now();
      void Promise.resolve()
        .then(() => send(ms))
        .catch(() => {}); // a lost report costs nothing
    }),
  );
}

/** For tests: forget that the report was sent. */
export function resetPainted(): void {
  sent = false;
}
