// Pause cards (pure): the answer each card builds from what the person picked
// and typed, whether it may be sent yet, and how a pause reads in the transcript.
import type {
  ApprovalAnswer,
  ApprovalItem,
  ApprovalRequest,
  ConnectorAnswer,
  ConnectorField,
  ConnectorRequest,
  Pause,
  Question,
  QuestionAnswer,
  QuestionRequest,
} from './types';

// ---- question ----

/** What the person did with one question: options picked, and the "Other…" text. */
export type QuestionDraft = { picked: string[]; other: string };

export const emptyDrafts = (req: QuestionRequest): QuestionDraft[] => req.questions.map(() => ({ picked: [], other: '' }));

/** Clicks an option: one choice replaces the pick (and the typed text); several toggle it. */
export function pickOption(q: Question, d: QuestionDraft, option: string): QuestionDraft {
  if (!q.multiple) return { picked: d.picked[0] === option && !d.other.trim() ? [] : [option], other: '' };
  const picked = d.picked.includes(option) ? d.picked.filter((o) => o !== option) : [...d.picked, option];
  return { ...d, picked: q.options.filter((o) => picked.includes(o)) };
}

/** Types in "Other…": with one choice, typing replaces the picked option. */
export function typeOther(q: Question, d: QuestionDraft, text: string): QuestionDraft {
  return { picked: !q.multiple && text.trim() ? [] : d.picked, other: text };
}

/** The answer to one question: the picked options (joined with ", ") and the typed text. */
export function answerOf(q: Question, d: QuestionDraft): string {
  const other = d.other.trim();
  if (!q.multiple) return other || (d.picked[0] ?? '');
  return [...d.picked, ...(other ? [other] : [])].join(', ');
}

/** The reply once every question has an answer; null before. */
export function questionReply(req: QuestionRequest, drafts: QuestionDraft[]): QuestionAnswer | null {
  const answers = req.questions.map((q, i) => answerOf(q, drafts[i] ?? { picked: [], other: '' }));
  return answers.length > 0 && answers.every((a) => a !== '') ? { answers } : null;
}

// ---- approval ----

export type ItemDecision = { approved: boolean; note: string };
/** By item id; absent: not decided yet. */
export type Decisions = Record<string, ItemDecision>;

/** Approves or declines one item, keeping its note. */
export function decide(decisions: Decisions, id: string, approved: boolean): Decisions {
  return { ...decisions, [id]: { approved, note: decisions[id]?.note ?? '' } };
}

/** Approves or declines every item (notes kept). */
export function decideAll(items: ApprovalItem[], decisions: Decisions, approved: boolean): Decisions {
  return Object.fromEntries(items.map((it) => [it.id, { approved, note: decisions[it.id]?.note ?? '' }]));
}

/** The reply once every item is decided; null before. */
export function approvalReply(req: ApprovalRequest, decisions: Decisions): ApprovalAnswer | null {
  if (req.items.length === 0 || !req.items.every((it) => decisions[it.id])) return null;
  return {
    decisions: req.items.map((it) => ({ id: it.id, approved: decisions[it.id]!.approved, note: decisions[it.id]!.note.trim() })),
  };
}

export function decisionCounts(items: ApprovalItem[], decisions: Decisions) {
  let approved = 0;
  let declined = 0;
  for (const it of items) {
    const d = decisions[it.id];
    if (d?.approved) approved++;
    else if (d) declined++;
  }
  return { approved, declined, open: items.length - approved - declined };
}

// ---- connector ----

const isUrl = (s: string) => {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
};

/** What is wrong with one field's value; '' when it is fine. */
export function fieldError(f: ConnectorField, value: string | undefined): string {
  const v = (value ?? '').trim();
  if (!v) return f.required ? `${f.label || f.name} is required.` : '';
  if (f.type === 'url' && !isUrl(v)) return 'Enter a full address starting with https://';
  if (f.type === 'select' && f.options.length > 0 && !f.options.includes(v)) return 'Pick one of the options.';
  return '';
}

/** The reply once every field is valid; null before. Blank optional fields are left out. */
export function connectorReply(req: ConnectorRequest, values: Record<string, string>): ConnectorAnswer | null {
  if (req.fields.some((f) => fieldError(f, values[f.name]))) return null;
  const out: Record<string, string> = {};
  for (const f of req.fields) {
    const v = f.type === 'secret' ? (values[f.name] ?? '') : (values[f.name] ?? '').trim();
    if (v.trim()) out[f.name] = v;
  }
  return { values: out };
}

// ---- credential ----

/** The reply once something is typed (sent as typed: a key may hold spaces); null before. */
export const credentialReply = (value: string): { value: string } | null => (value.trim() ? { value } : null);

// ---- how a pause reads ----

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The card's heading; handle: the agent's, when the heading should name it. */
export function pauseTitle(p: Pause, handle = ''): string {
  switch (p.kind) {
    case 'question':
      return p.request.questions.length === 1 ? 'A question for you' : `${p.request.questions.length} questions for you`;
    case 'approval':
      return p.request.title || `Approve ${plural(p.request.items.length, 'action')}?`;
    case 'connector':
      return p.request.title || `Connect ${p.request.connector}`;
    case 'credential':
      return p.request.label || `A value for \${${p.request.variable}}`;
    case 'takeover': {
      const who = handle ? `@${handle} needs` : 'Needs';
      return p.request.reason ? `${who} your hands: ${p.request.reason}` : `${who} your hands in its browser`;
    }
  }
}

/** The transcript line where the run paused. */
export function askedSummary(p: Pause): string {
  switch (p.kind) {
    case 'question':
      return `Asked you ${plural(p.request.questions.length, 'question')}`;
    case 'approval':
      return `Asked you to approve ${plural(p.request.items.length, 'action')}`;
    case 'connector':
      return `Asked you to connect ${p.request.connector}`;
    case 'credential':
      return `Asked you for \${${p.request.variable}}`;
    case 'takeover':
      return p.request.reason ? `Asked you to take over: ${p.request.reason}` : 'Asked you to take over its browser';
  }
}

export type SummaryLine = { label: string; value: string; tone?: 'ok' | 'no' };

/** The transcript lines where the run resumed: what the person answered. */
export function answeredSummary(p: Pause): { title: string; lines: SummaryLine[] } {
  const a = p.answer;
  if (p.status === 'cancelled') return { title: 'Cancelled before you answered', lines: [] };
  if (!a) return { title: 'Waiting for your answer', lines: [] };
  if ('dismissed' in a) return { title: 'You dismissed it', lines: a.note ? [{ label: 'Note', value: a.note }] : [] };
  switch (p.kind) {
    case 'question': {
      const answers = 'answers' in a ? a.answers : [];
      return {
        title: 'You answered',
        lines: p.request.questions.map((q, i) => ({ label: q.header || q.question, value: answers[i] ?? '' })),
      };
    }
    case 'approval': {
      const byId = new Map(('decisions' in a ? a.decisions : []).map((d) => [d.id, d]));
      const lines: SummaryLine[] = p.request.items.map((it) => {
        const d = byId.get(it.id);
        return { label: it.title, value: d ? (d.approved ? 'approved' : 'declined') + (d.note ? ` — ${d.note}` : '') : '', tone: d?.approved ? 'ok' : 'no' };
      });
      const ok = lines.filter((l) => l.tone === 'ok').length;
      const no = lines.length - ok;
      const title = no === 0 ? `You approved ${ok === 1 ? 'it' : `all ${ok}`}` : ok === 0 ? `You declined ${no === 1 ? 'it' : `all ${no}`}` : `You approved ${ok} and declined ${no}`;
      return { title, lines };
    }
    case 'connector': {
      const values = 'values' in a ? a.values : {};
      const fields = new Map(p.request.fields.map((f) => [f.name, f]));
      // A secret field is stored as the variable that holds it; never show anything else there.
      const shown = (k: string, v: string) => (fields.get(k)?.type === 'secret' && !/^\$\{[A-Z][A-Z0-9_]*\}$/.test(v) ? 'saved as a variable' : v);
      return {
        title: `You connected ${p.request.connector}`,
        lines: Object.entries(values).map(([k, v]) => ({ label: fields.get(k)?.label || k, value: shown(k, v) })),
      };
    }
    case 'credential':
      return { title: `You filled \${${p.request.variable}}`, lines: [] };
    case 'takeover':
      return { title: 'You handed back', lines: [] };
  }
}
