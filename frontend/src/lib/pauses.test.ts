import { describe, expect, it } from 'vitest';
import {
  answeredSummary,
  answerOf,
  approvalReply,
  askedSummary,
  connectorReply,
  credentialReply,
  decide,
  decideAll,
  decisionCounts,
  emptyDrafts,
  fieldError,
  pauseTitle,
  pickOption,
  questionReply,
  typeOther,
  type QuestionDraft,
} from './pauses';
import type { ApprovalRequest, ConnectorField, ConnectorRequest, Pause, Question, QuestionRequest } from './pausetypes';

const single: Question = { question: 'Which region?', header: 'Region', options: ['EU', 'US'], multiple: false };
const multi: Question = { question: 'Which channels?', header: '', options: ['Email', 'Slack', 'SMS'], multiple: true };
const qreq: QuestionRequest = { questions: [single, multi] };

describe('question card', () => {
  it('one choice: a click picks, another replaces it, the same one unpicks it', () => {
    let d: QuestionDraft = { picked: [], other: '' };
    d = pickOption(single, d, 'EU');
    expect(d.picked).toEqual(['EU']);
    d = pickOption(single, d, 'US');
    expect(d.picked).toEqual(['US']);
    expect(answerOf(single, d)).toBe('US');
    d = pickOption(single, d, 'US');
    expect(answerOf(single, d)).toBe('');
  });

  it('one choice: typing replaces the pick, and picking clears the text', () => {
    let d = pickOption(single, { picked: [], other: '' }, 'EU');
    d = typeOther(single, d, 'Asia');
    expect(d).toEqual({ picked: [], other: 'Asia' });
    expect(answerOf(single, d)).toBe('Asia');
    d = pickOption(single, d, 'EU');
    expect(d).toEqual({ picked: ['EU'], other: '' });
  });

  it('several: clicks toggle, kept in the order of the options, with the typed text last', () => {
    let d: QuestionDraft = { picked: [], other: '' };
    d = pickOption(multi, d, 'SMS');
    d = pickOption(multi, d, 'Email');
    expect(answerOf(multi, d)).toBe('Email, SMS');
    d = typeOther(multi, d, '  Pager ');
    expect(answerOf(multi, d)).toBe('Email, SMS, Pager');
    d = pickOption(multi, d, 'SMS');
    expect(answerOf(multi, d)).toBe('Email, Pager');
  });

  it('has a reply only once every question has an answer', () => {
    const drafts = emptyDrafts(qreq);
    expect(questionReply(qreq, drafts)).toBeNull();
    drafts[0] = pickOption(single, drafts[0]!, 'EU');
    expect(questionReply(qreq, drafts)).toBeNull();
    drafts[1] = typeOther(multi, drafts[1]!, '   ');
    expect(questionReply(qreq, drafts)).toBeNull();
    drafts[1] = typeOther(multi, drafts[1]!, 'Fax');
    expect(questionReply(qreq, drafts)).toEqual({ answers: ['EU', 'Fax'] });
  });

  it('a question without options is answered by typing', () => {
    const q: Question = { question: 'Name?', header: '', options: [], multiple: false };
    expect(questionReply({ questions: [q] }, [typeOther(q, { picked: [], other: '' }, 'Rerun')])).toEqual({ answers: ['Rerun'] });
  });
});

const areq: ApprovalRequest = {
  title: 'Clean up',
  reason: 'Disk is full',
  policy: false,
  items: [
    { id: 'a1', title: 'Delete logs', kind: 'command', detail: 'rm -rf logs', tool: 'run_command', input: { command: 'rm -rf logs' } },
    { id: 'a2', title: 'Edit config', kind: 'diff', detail: '@@\n-a\n+b', tool: '', input: null },
    { id: 'a3', title: 'Email ops', kind: 'text', detail: 'Hi *ops*', tool: '', input: null },
  ],
};

describe('approval card', () => {
  it('has a reply once every item is decided, item by item in order', () => {
    let d = decide({}, 'a2', false);
    d = decide(d, 'a1', true);
    expect(approvalReply(areq, d)).toBeNull();
    expect(decisionCounts(areq.items, d)).toEqual({ approved: 1, declined: 1, open: 1 });
    d = decide(d, 'a3', true);
    d = { ...d, a2: { approved: false, note: '  keep it  ' } };
    expect(approvalReply(areq, d)).toEqual({
      decisions: [
        { id: 'a1', approved: true, note: '' },
        { id: 'a2', approved: false, note: 'keep it' },
        { id: 'a3', approved: true, note: '' },
      ],
    });
  });

  it('approve all and decline all decide every item and keep notes', () => {
    const d = decideAll(areq.items, { a1: { approved: false, note: 'no' } }, true);
    expect(decisionCounts(areq.items, d)).toEqual({ approved: 3, declined: 0, open: 0 });
    expect(d.a1!.note).toBe('no');
    expect(decisionCounts(areq.items, decideAll(areq.items, d, false)).declined).toBe(3);
  });

  it('changing a decision keeps its note', () => {
    const d = decide({ a1: { approved: false, note: 'why' } }, 'a1', true);
    expect(d.a1).toEqual({ approved: true, note: 'why' });
  });
});

const field = (f: Partial<ConnectorField>): ConnectorField => ({
  name: 'x',
  label: 'X',
  type: 'text',
  required: false,
  options: [],
  placeholder: '',
  help: '',
  ...f,
});

describe('connector card', () => {
  const creq: ConnectorRequest = {
    connector: 'github',
    title: 'Connect GitHub',
    description: '',
    fields: [
      field({ name: 'org', label: 'Organisation', required: true }),
      field({ name: 'url', label: 'API URL', type: 'url' }),
      field({ name: 'scope', label: 'Scope', type: 'select', options: ['read', 'write'], required: true }),
      field({ name: 'token', label: 'Token', type: 'secret', required: true }),
    ],
  };

  it('checks required fields, addresses and options', () => {
    expect(fieldError(creq.fields[0]!, '  ')).toBe('Organisation is required.');
    expect(fieldError(creq.fields[1]!, '')).toBe('');
    expect(fieldError(creq.fields[1]!, 'github.com')).toMatch(/https/);
    expect(fieldError(creq.fields[1]!, 'javascript:alert(1)')).toMatch(/https/);
    expect(fieldError(creq.fields[1]!, 'https://api.github.com')).toBe('');
    expect(fieldError(creq.fields[2]!, 'admin')).toMatch(/options/);
  });

  it('replies with trimmed values, secrets as typed, and no blank optional field', () => {
    expect(connectorReply(creq, { org: 'acme', scope: 'read' })).toBeNull();
    expect(connectorReply(creq, { org: ' acme ', scope: 'read', token: ' tok en ', url: '' })).toEqual({
      values: { org: 'acme', scope: 'read', token: ' tok en ' },
    });
  });
});

describe('credential card', () => {
  it('replies once something is typed, exactly as typed', () => {
    expect(credentialReply('')).toBeNull();
    expect(credentialReply('   ')).toBeNull();
    expect(credentialReply(' sk-1 ')).toEqual({ value: ' sk-1 ' });
  });
});

const base = {
  id: 'pz_1',
  run_id: 'rn_1',
  agent_id: 'ag_1',
  session_id: 'se_1',
  tool_call_id: 'tc_1',
  automated: false,
  created_at: '2025-01-01T00:00:00Z',
  answered_at: null,
};

describe('how a pause reads', () => {
  it('questions', () => {
    const p: Pause = { ...base, kind: 'question', status: 'answered', request: qreq, answer: { answers: ['EU', 'Email, Slack'] } };
    expect(pauseTitle(p)).toBe('2 questions for you');
    expect(askedSummary(p)).toBe('Asked you 2 questions');
    expect(answeredSummary(p)).toEqual({
      title: 'You answered',
      lines: [
        { label: 'Region', value: 'EU' },
        { label: 'Which channels?', value: 'Email, Slack' },
      ],
    });
    expect(pauseTitle({ ...p, request: { questions: [single] } })).toBe('A question for you');
    expect(askedSummary({ ...p, request: { questions: [single] } })).toBe('Asked you 1 question');
  });

  it('approvals', () => {
    const p: Pause = {
      ...base,
      kind: 'approval',
      status: 'answered',
      request: areq,
      answer: {
        decisions: [
          { id: 'a1', approved: true, note: '' },
          { id: 'a2', approved: false, note: 'not now' },
          { id: 'a3', approved: true, note: '' },
        ],
      },
    };
    expect(pauseTitle(p)).toBe('Clean up');
    expect(pauseTitle({ ...p, request: { ...areq, title: '' } })).toBe('Approve 3 actions?');
    expect(askedSummary(p)).toBe('Asked you to approve 3 actions');
    const s = answeredSummary(p);
    expect(s.title).toBe('You approved 2 and declined 1');
    expect(s.lines[1]).toEqual({ label: 'Edit config', value: 'declined — not now', tone: 'no' });
    const all = answeredSummary({ ...p, answer: { decisions: areq.items.map((i) => ({ id: i.id, approved: true, note: '' })) } });
    expect(all.title).toBe('You approved all 3');
  });

  it('connectors never show a secret field unless it is a variable reference', () => {
    const creq: ConnectorRequest = {
      connector: 'GitHub',
      title: '',
      description: '',
      fields: [field({ name: 'org', label: 'Org' }), field({ name: 'token', label: 'Token', type: 'secret' })],
    };
    const p: Pause = { ...base, kind: 'connector', status: 'answered', request: creq, answer: { values: { org: 'acme', token: '${GITHUB_TOKEN}' } } };
    expect(pauseTitle(p)).toBe('Connect GitHub');
    expect(answeredSummary(p)).toEqual({
      title: 'You connected GitHub',
      lines: [
        { label: 'Org', value: 'acme' },
        { label: 'Token', value: '${GITHUB_TOKEN}' },
      ],
    });
    const leaked = answeredSummary({ ...p, answer: { values: { token: 'ghp_secret' } } });
    expect(JSON.stringify(leaked)).not.toContain('ghp_secret');
  });

  it('credentials, dismissals and cancellations', () => {
    const req = { variable: 'STRIPE_KEY', label: '', description: '', url: '' };
    const p: Pause = { ...base, kind: 'credential', status: 'answered', request: req, answer: { variable: 'STRIPE_KEY', filled: true } };
    expect(pauseTitle(p)).toBe('A value for ${STRIPE_KEY}');
    expect(askedSummary(p)).toBe('Asked you for ${STRIPE_KEY}');
    expect(answeredSummary(p)).toEqual({ title: 'You filled ${STRIPE_KEY}', lines: [] });
    expect(answeredSummary({ ...p, status: 'dismissed', answer: { dismissed: true, note: 'later' } })).toEqual({
      title: 'You dismissed it',
      lines: [{ label: 'Note', value: 'later' }],
    });
    expect(answeredSummary({ ...p, status: 'cancelled', answer: null }).title).toMatch(/Cancelled/);
  });

  it('takeovers: the heading names the agent; the hand-back answers it', () => {
    const req = { reason: 'solve the captcha', url: 'https://shop.example/login' };
    const p: Pause = { ...base, kind: 'takeover', status: 'answered', request: req, answer: { handed_back: true } };
    expect(pauseTitle(p, 'ada')).toBe('@ada needs your hands: solve the captcha');
    expect(pauseTitle(p)).toBe('Needs your hands: solve the captcha');
    expect(pauseTitle({ ...p, request: { ...req, reason: '' } }, 'ada')).toBe('@ada needs your hands in its browser');
    expect(askedSummary(p)).toBe('Asked you to take over: solve the captcha');
    expect(answeredSummary(p)).toEqual({ title: 'You handed back', lines: [] });
    expect(answeredSummary({ ...p, status: 'open', answer: null }).title).toBe('Waiting for your answer');
  });
});
