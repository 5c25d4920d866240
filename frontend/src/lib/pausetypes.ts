// The pauses a run raises for a person (cards), as the API sends them: each
// kind's request and answer. lib/pauses.ts registers the kinds and their cards.
import type { PauseKinds } from './pauses';

/** The kinds of pause, as lib/pauses.ts registers them. */
export type PauseKind = keyof PauseKinds;

export type PauseStatus = 'open' | 'answered' | 'dismissed' | 'cancelled';

export type Question = {
  question: string;
  /** A short label; may be ''. */
  header: string;
  /** Suggested answers, shown as buttons (0..6). */
  options: string[];
  /** Several options may be picked (joined with ", "). */
  multiple: boolean;
};

export type QuestionRequest = { questions: Question[] };

/** One answer per question, in order, none empty. */
export type QuestionAnswer = { answers: string[] };

export type ApprovalItemKind = 'command' | 'target' | 'diff' | 'text';

export type ApprovalItem = {
  id: string;
  title: string;
  kind: ApprovalItemKind;
  detail: string;
  /** The tool that runs when approved ('' = the agent acts itself). */
  tool: string;
  input: unknown;
};

/** policy: raised by an ask-first switch. */
export type ApprovalRequest = { title: string; reason: string; policy: boolean; items: ApprovalItem[] };

export type ApprovalDecision = { id: string; approved: boolean; note: string };

export type ApprovalAnswer = { decisions: ApprovalDecision[] };

export type ConnectorFieldType = 'text' | 'url' | 'secret' | 'select';

export type ConnectorField = {
  name: string;
  label: string;
  type: ConnectorFieldType;
  required: boolean;
  options: string[];
  placeholder: string;
  help: string;
};

export type ConnectorRequest = { connector: string; title: string; description: string; fields: ConnectorField[] };

/** Stored secret fields read "${VARIABLE}". */
export type ConnectorAnswer = { values: Record<string, string> };

export type CredentialRequest = { variable: string; label: string; description: string; url: string };

/** Never the value. */
export type CredentialAnswer = { variable: string; filled: true };

/** The agent needs the person's hands in its browser (a captcha, a sign-in); url: the page it is on. */
export type TakeoverRequest = { reason: string; url: string };

/** Answered by Hand back in the Desktop tab. */
export type TakeoverAnswer = { handed_back: true };

/** A run reached a spend limit before its next model call: what was spent (tokens or USD) against which limit. */
export type BudgetRequest = {
  scope: 'run' | 'agent' | 'workspace';
  period: 'run' | 'day';
  unit: 'tokens' | 'usd';
  agent_id: string;
  /** Whose limit: the agent's or the workspace's. */
  owner: 'agent' | 'workspace';
  /** YYYY-MM-DD of a daily limit. */
  day?: string;
  limit: number;
  spent: number;
  /** About what the next call needs. */
  need: number;
  suggest_more: number;
  suggest_limit: number;
};

/** allow: amount more for this run; raise: the new limit; stop: end the run. */
export type BudgetAnswer = { choice: 'allow' | 'raise' | 'stop'; amount: number };

export type DismissAnswer = { dismissed: true; note: string };

type PauseBase = {
  id: string;
  run_id: string;
  agent_id: string;
  session_id: string;
  status: PauseStatus;
  /** The tool call that raised it; '' for an ask-first approval. */
  tool_call_id: string;
  /** The run was started by a schedule, trigger, agent or the API. */
  automated: boolean;
  created_at: string;
  answered_at: string | null;
};

/** A pause of each kind: its request and its answer (null while open). */
export type Pause = {
  [K in PauseKind]: PauseBase & { kind: K; request: PauseKinds[K]['request']; answer: PauseKinds[K]['answer'] | DismissAnswer | null };
}[PauseKind];

/** What POST …/pauses/{id}/answer takes: what a kind's card sends, or a dismissal. */
export type PauseReply = PauseKinds[PauseKind]['reply'] | { dismiss: true; note?: string };

export type PauseQuery = { agent_id?: string; status?: PauseStatus };
