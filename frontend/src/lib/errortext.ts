// Errors shown to a person: what happened and what to do, in plain words, with
// the technical text kept for a "Details" toggle (ErrorNote.svelte). The rules
// read the text the server or the browser produced; the first that matches wins.

export type Explained = {
  /** What happened, one sentence. */
  summary: string;
  /** What to do about it, one sentence ('' when nothing useful). */
  action: string;
  /** The original text, for the Details toggle ('' when the summary is it). */
  detail: string;
};

type Rule = { test: RegExp; summary: string; action: string };

const RULES: Rule[] = [
  {
    test: /connection refused|ECONNREFUSED|actively refused/i,
    summary: 'The service did not answer: nothing is listening at its address.',
    action: 'Check that it is running and that the address is right, then try again.',
  },
  {
    test: /no such host|ENOTFOUND|server misbehaving|name resolution|lookup \S+ on/i,
    summary: 'The service’s address could not be found.',
    action: 'Check the address for typos and that this computer is online.',
  },
  {
    test: /deadline exceeded|i\/o timeout|timed? ?out|ETIMEDOUT/i,
    summary: 'The service took too long to answer.',
    action: 'Try again in a moment; if it keeps happening, check that it is running.',
  },
  {
    test: /x509|certificate|tls: /i,
    summary: 'The service’s security certificate could not be trusted.',
    action: 'Check the address (https vs http) or ask whoever runs the service.',
  },
  {
    test: /\b401\b|unauthori[sz]ed|invalid[_ ]api[_ ]key|incorrect api key|authentication/i,
    summary: 'The service refused the sign-in: the key or token was not accepted.',
    action: 'Check the key in Settings, or sign in again.',
  },
  {
    test: /\b403\b|forbidden|permission denied/i,
    summary: 'The service said this account may not do that.',
    action: 'Check the account’s permissions, or use another key.',
  },
  {
    test: /\b429\b|rate.?limit|too many requests|quota/i,
    summary: 'The service is limiting how often it can be used.',
    action: 'Wait a minute and try again, or check the plan’s limits.',
  },
  {
    test: /\b(500|502|503|504)\b|bad gateway|service unavailable|internal server error/i,
    summary: 'The service had a problem on its side.',
    action: 'Try again in a moment.',
  },
  {
    test: /executable file not found|no such file or directory|command not found/i,
    summary: 'The program to start could not be found on this computer.',
    action: 'Install it, or check the command.',
  },
  {
    test: /\b404\b|not found/i,
    summary: 'The service has nothing at that address.',
    action: 'Check the address, or whether it was moved or removed.',
  },
  {
    test: /failed to fetch|networkerror|load failed|network request failed/i,
    summary: 'Rerun could not reach its own service on this computer.',
    action: 'Check that Rerun is still running, then reload the page.',
  },
  {
    test: /\bEOF\b|connection reset|broken pipe|ECONNRESET/i,
    summary: 'The connection closed before the answer came.',
    action: 'Try again; if it keeps happening, the service may be restarting.',
  },
];

/** Words and shapes only developers write: stack-ish chains, sockets, Go/JS error prefixes. */
const TECHNICAL =
  /\b(dial|tcp|udp|errno|rpc|json|EOF|transport|stderr|stdout|exit status|panic|goroutine|syscall|nil)\b|https?:\/\/|\d+\.\d+\.\d+\.\d+|:\d{2,5}\b|\w+: \w+: /i;

/** Explains an error message; plain sentences pass through as they are. */
export function explainError(raw: unknown): Explained {
  const text = (raw instanceof Error ? raw.message : String(raw ?? '')).trim();
  if (text === '') return { summary: 'Something went wrong.', action: 'Try again.', detail: '' };
  for (const r of RULES) {
    if (r.test.test(text)) return { summary: r.summary, action: r.action, detail: text };
  }
  if (TECHNICAL.test(text)) return { summary: 'Something went wrong.', action: 'Try again; the details below say what failed.', detail: text };
  return { summary: sentence(text), action: '', detail: '' };
}

/** The text with a capital first letter and a full stop, as the UI writes sentences. */
function sentence(s: string): string {
  const t = s.charAt(0).toUpperCase() + s.slice(1);
  return /[.!?…)]$/.test(t) ? t : `${t}.`;
}
