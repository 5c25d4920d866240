// The Brain view's logic: who wrote a version, the diff between two versions,
// and the checks a draft must pass before it is sent (the server checks again).
import { lineDiff } from './apps';

/** Who wrote a Brain version: the person, the Foreman (onboarding) or an agent whose proposal was approved. */
export type BrainAuthor = string; // 'person' | 'foreman' | 'agent:@handle'

/** A Brain page in the list: everything but its body (docs/http-api.md, "The Brain"). */
export type BrainSummary = {
  id: string;
  slug: string;
  title: string;
  /** What agents read: own_summary, else the body's first paragraph. */
  summary: string;
  own_summary: string;
  version: number;
  size: number;
  edited_by_person: boolean;
  created_at: string;
  updated_at: string;
  updated_by: BrainAuthor;
};

export type BrainPage = BrainSummary & { body: string };

export type BrainVersion = { version: number; title: string; summary: string; body: string; author: BrainAuthor; created_at: string };

export type BrainPageInput = { title: string; body: string; summary?: string };

/** Limits of a page (backend/brain). */
export const MAX_TITLE = 120;
export const MAX_SUMMARY = 300;
export const MAX_BODY_BYTES = 64 * 1024;

/** Who wrote a version, as the view says it. */
export function authorLabel(author: string): string {
  if (author === 'person') return 'you';
  if (author === 'foreman') return 'the Foreman';
  if (author.startsWith('agent:')) return author.slice('agent:'.length);
  return author;
}

/** The change from one version of a page to another, as a unified diff (one hunk, every line). */
export function versionDiff(older: string, newer: string, from: string, to: string): string {
  const split = (s: string) => (s === '' ? [] : s.replace(/\n$/, '').split('\n'));
  const a = split(older);
  const b = split(newer);
  const ops = lineDiff(a, b);
  const out = [`--- ${from}`, `+++ ${to}`];
  if (ops.some((o) => o.op !== ' ')) {
    out.push(`@@ -${a.length ? 1 : 0},${a.length} +${b.length ? 1 : 0},${b.length} @@`, ...ops.map((o) => o.op + o.text));
  }
  return out.join('\n');
}

/** The version before v in a newest-first list, if any. */
export function previousOf(versions: BrainVersion[], v: BrainVersion): BrainVersion | undefined {
  return versions.find((o) => o.version < v.version);
}

/** The one line a version is listed by in the history. */
export function versionLine(versions: BrainVersion[], v: BrainVersion): string {
  const prev = previousOf(versions, v);
  const what = !prev ? 'created' : prev.title !== v.title ? `renamed from “${prev.title}”` : 'edited';
  return `${what} by ${authorLabel(v.author)}`;
}

export type BrainDraft = { title: string; summary: string; body: string };

/** What is wrong with a draft, or '' when it can be saved. */
export function draftProblem(d: BrainDraft): string {
  const title = d.title.trim();
  if (!title) return 'Give the page a title, e.g. “What we sell”.';
  if ([...title].length > MAX_TITLE) return `The title is ${[...title].length} characters; keep it to ${MAX_TITLE}.`;
  if ([...d.summary.trim()].length > MAX_SUMMARY) return `The summary is ${[...d.summary.trim()].length} characters; keep it to ${MAX_SUMMARY}.`;
  const bytes = new TextEncoder().encode(d.body).length;
  if (bytes > MAX_BODY_BYTES) return `The page is ${Math.ceil(bytes / 1024)} KiB; keep it to 64 KiB (split it into several pages).`;
  return '';
}

/** Whether the draft differs from what was loaded. */
export function draftChanged(d: BrainDraft, from: BrainDraft): boolean {
  return d.title.trim() !== from.title.trim() || d.summary.trim() !== from.summary.trim() || d.body !== from.body;
}
