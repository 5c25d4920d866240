// Pause cards: the registry of the kinds of pause and how any pause reads.
// Each kind is defined once, beside its card (components/<Kind>Card.svelte,
// in its module script): how it reads in the card, the transcript and the
// notification settings, and the answer its card builds. A new kind is its
// card and one line in `kinds`.
import type { Component } from 'svelte';
import ApprovalCard, { approval } from '../components/ApprovalCard.svelte';
import BudgetCard, { budget } from '../components/BudgetCard.svelte';
import ConnectorCard, { connector } from '../components/ConnectorCard.svelte';
import CredentialCard, { credential, type CredentialReply } from '../components/CredentialCard.svelte';
import QuestionCard, { question } from '../components/QuestionCard.svelte';
import TakeoverCard, { takeover } from '../components/TakeoverCard.svelte';
import type {
  ApprovalAnswer,
  ApprovalRequest,
  BudgetAnswer,
  BudgetRequest,
  ConnectorAnswer,
  ConnectorRequest,
  CredentialAnswer,
  CredentialRequest,
  Pause,
  QuestionAnswer,
  QuestionRequest,
  TakeoverAnswer,
  TakeoverRequest,
} from './pausetypes';

export type SummaryLine = { label: string; value: string; tone?: 'ok' | 'no' };

/** What a kind of pause says about itself, for its request type Req and stored answer type Ans. */
export interface KindSpec<Req, Ans> {
  /** Its name in settings and lists, and when it reaches you. */
  label: string;
  hint: string;
  /** Its mark: an SVG path on a 16×16 grid. */
  icon: string;
  /** The card's button, and its hint until the answer is ready. */
  submit: string;
  waiting: string;
  /** What Dismiss does, when not "the agent continues without it". */
  dismissHint?: string;
  /** Answered in the Desktop tab, not in the card: the button opens the Desktop. */
  inDesktop?: boolean;
  /** The card's heading; handle: the agent's, when the heading should name it. */
  title(req: Req, handle: string): string;
  /** The transcript line where the run paused. */
  asked(req: Req): string;
  /** The transcript lines where the run resumed from an answer. */
  answered(req: Req, answer: Ans): { title: string; lines: SummaryLine[] };
}

/** The props of every card: the request, the reply it builds (null until ready), the agent's name. */
export type CardProps<Req, Reply> = { request: Req; reply?: Reply | null; agentName: string };

/** A kind with its card; Reply is what the card sends. */
export interface Kind<Req, Ans, Reply> extends KindSpec<Req, Ans> {
  Card: Component<CardProps<Req, Reply>, object, '' | 'reply'>;
}

const kind = <Req, Ans, Reply>(spec: KindSpec<Req, Ans>, Card: Component<CardProps<Req, Reply>, object, '' | 'reply'>): Kind<Req, Ans, Reply> => ({
  ...spec,
  Card,
});

/** Every kind of pause, in the order lists show them. */
export const kinds = {
  question: kind<QuestionRequest, QuestionAnswer, QuestionAnswer>(question, QuestionCard),
  approval: kind<ApprovalRequest, ApprovalAnswer, ApprovalAnswer>(approval, ApprovalCard),
  connector: kind<ConnectorRequest, ConnectorAnswer, ConnectorAnswer>(connector, ConnectorCard),
  credential: kind<CredentialRequest, CredentialAnswer, CredentialReply>(credential, CredentialCard),
  takeover: kind<TakeoverRequest, TakeoverAnswer, never>(takeover, TakeoverCard),
  budget: kind<BudgetRequest, BudgetAnswer, BudgetAnswer>(budget, BudgetCard),
};

/** By kind: its request, stored answer and reply types (types.ts builds Pause and PauseReply from them). */
export type PauseKinds = {
  [K in keyof typeof kinds]: (typeof kinds)[K] extends Kind<infer Req, infer Ans, infer Reply> ? { request: Req; answer: Ans; reply: Reply } : never;
};

export const PAUSE_KINDS = Object.keys(kinds) as (keyof typeof kinds)[];

/** The kind of p. Its request and answer always go with it, so the spec is read loosely. */
export const kindOf = (p: Pause): Kind<unknown, unknown, unknown> => kinds[p.kind] as Kind<unknown, unknown, unknown>;

/** The card's heading; handle: the agent's, when the heading should name it. */
export const pauseTitle = (p: Pause, handle = ''): string => kindOf(p).title(p.request, handle);

/** The transcript line where the run paused. */
export const askedSummary = (p: Pause): string => kindOf(p).asked(p.request);

/** The transcript lines where the run resumed: what the person answered. */
export function answeredSummary(p: Pause): { title: string; lines: SummaryLine[] } {
  const a = p.answer;
  if (p.status === 'cancelled') return { title: 'Cancelled before you answered', lines: [] };
  if (!a) return { title: 'Waiting for your answer', lines: [] };
  if ('dismissed' in a) return { title: 'You dismissed it', lines: a.note ? [{ label: 'Note', value: a.note }] : [] };
  return kindOf(p).answered(p.request, a);
}

// What each card builds, defined beside it.
export { approvalReply, decide, decideAll, decisionCounts, type Decisions, type ItemDecision } from '../components/ApprovalCard.svelte';
export { budgetAmount, budgetDraft, budgetLine, budgetReply, changedNote, liveRequest, parseAmount, type BudgetDraft } from '../components/BudgetCard.svelte';
export { connectorReply, fieldError } from '../components/ConnectorCard.svelte';
export { credentialReply } from '../components/CredentialCard.svelte';
export { answerOf, emptyDrafts, pickOption, questionReply, typeOther, type QuestionDraft } from '../components/QuestionCard.svelte';
