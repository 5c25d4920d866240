/**
 * Tells the server, once per page, that the board has painted: two frames
 * after the workspace's data is on screen. The server logs it ("ui board
 * painted", with the time since the page opened and the page's marks on
 * the way: its script running, the workspace's data in, the first frame
 * drawn): make bench times a launch by that line, and it says where a slow
 * start spent its time.
 */
let sent = false;

/** The page's milestones, in milliseconds since it opened. */
export type Marks = {
  /** the bundle runs */
  script_ms?: number;
  /** the workspace's data is in */
  data_ms?: number;
  /** the first frame with the board drawn (the second one is page_ms) */
  frame_ms?: number;
};
const marks: Marks = {};

/** Notes when the page reached a milestone (the first time only). */
export function mark(name: keyof Marks, now: () => number = () => performance.now()): void {
  marks[name] ??= now();
}

export function reportPainted(
  send: (pageMs: number, marks: Marks) => Promise<unknown>,
  frame: (cb: () => void) => void = (cb) => requestAnimationFrame(() => cb()),
  now: () => number = () => performance.now(),
): void {
  if (sent) return;
  sent = true;
  frame(() => {
    marks.frame_ms = now();
    frame(() => {
      const ms = now();
      void Promise.resolve()
        .then(() => send(ms, { ...marks }))
        .catch(() => {}); // a lost report costs nothing
    });
  });
}

/** For tests: forget that the report was sent and the marks. */
export function resetPainted(): void {
  sent = false;
  delete marks.script_ms;
  delete marks.data_ms;
  delete marks.frame_ms;
}
