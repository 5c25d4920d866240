// Runs on the workspace's other devices (pure): how their summaries read in
// the Monitoring tab's "On your other devices". Device sync carries only a
// summary of each run (no steps, no log), so these rows open nothing.

import type { RunSummary } from './runs';

/** A device as a short label: the name it gave itself, else the end of its id ("dev_…"). */
export function deviceLabel(device: string, name?: string): string {
  if (name) return name;
  const id = device.startsWith('dev_') ? device.slice(4) : device;
  if (!id) return 'Another device';
  return `Device ${id.length > 6 ? id.slice(-6) : id}`;
}

/** The beginning of a text on one line, cut at a word with an ellipsis. */
export function excerpt(text: string, max = 140): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  const cut = flat.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return (space > max * 0.6 ? cut.slice(0, space) : cut).replace(/[\s.,;:]+$/, '') + '…';
}

/** What the run came to: the error of a failed run, else its output. */
export function outcome(s: RunSummary): string {
  if (s.status === 'failed' && s.error) return s.error;
  return s.output;
}
