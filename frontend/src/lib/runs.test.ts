import { describe, expect, it } from 'vitest';
import {
  argSummary,
  between,
  buildTranscript,
  exactCost,
  formatCost,
  formatDuration,
  formatTokens,
  PendingText,
  prettyJson,
  runActivity,
  statusLabel,
  tokenCounts,
} from './runs';
import type { Pause } from './pausetypes';
import type { RunDetail, Step } from './runs';

const T = '2026-11-30T10:00:00.000Z';

function step(run_id: string, seq: number, s: Pick<Step, 'kind' | 'data'>): Step {
  return { run_id, seq, input_tokens: 0, output_tokens: 0, cost_usd: 0, started_at: T, ended_at: T, ...s } as Step;
}

function run(id: string, status: RunDetail['status'], steps: Pick<Step, 'kind' | 'data'>[], extra: Partial<RunDetail> = {}): RunDetail {
  return {
    id,
    agent_id: 'ag_1',
    session_id: 'ses_1',
    source: 'chat',
    parent_run_id: '',
    status,
    input: '',
    output: '',
    error: '',
    provider: '',
    model: '',
    input_tokens: 0,
    output_tokens: 0,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    cost_usd: 0,
    cost_known: true,
    created_at: T,
    started_at: T,
    ended_at: null,
    steps: steps.map((s, i) => step(id, i + 1, s)),
    ...extra,
  };
}

const toolRun = run('r2', 'done', [
  { kind: 'input', data: { text: 'use tool list_files {}', from: 'you' } },
  { kind: 'model', data: { text: '', tool_calls: [{ id: 'c1', name: 'list_files', input: {} }] } },
  { kind: 'tool_call', data: { id: 'c1', name: 'list_files', input: { path: '.' } } },
  { kind: 'tool_result', data: { id: 'c1', name: 'list_files', output: '. is empty', is_error: false } },
  { kind: 'model', data: { text: 'Tool said: . is empty' } },
]);

describe('buildTranscript', () => {
  it('turns input, model and tool steps into chat items', () => {
    const items = buildTranscript([
      run('r1', 'done', [
        { kind: 'input', data: { text: 'hello', from: 'you' } },
        { kind: 'model', data: { text: 'You said: hello' } },
      ]),
      toolRun,
    ]);
    expect(items.map((i) => i.kind)).toEqual(['user', 'agent', 'user', 'tool', 'agent']);
    expect(items[0]).toMatchObject({ text: 'hello', from: 'you' });
    expect(items[3]).toMatchObject({ name: 'list_files', input: { path: '.' }, output: '. is empty', isError: false });
    expect(items[4]).toMatchObject({ text: 'Tool said: . is empty', streaming: false });
  });

  it('keeps who sent a message, errors, cancels and failed results', () => {
    const items = buildTranscript([
      run('r1', 'cancelled', [
        { kind: 'input', data: { text: 'hi', from: '@grace' } },
        { kind: 'tool_call', data: { id: 'x', name: 'run_command', input: { command: 'false' } } },
        { kind: 'tool_result', data: { id: 'x', name: 'run_command', output: 'exit 1', is_error: true } },
        { kind: 'cancel', data: { reason: 'stopped by you' } },
      ]),
      run('r2', 'failed', [{ kind: 'input', data: { text: 'x', from: 'you' } }], { error: 'no model provider is configured' }),
      run('r3', 'failed', [{ kind: 'error', data: { message: 'boom' } }], { error: 'boom' }),
    ]);
    expect(items[0]).toMatchObject({ kind: 'user', from: '@grace' });
    expect(items[1]).toMatchObject({ kind: 'tool', isError: true, output: 'exit 1' });
    expect(items[2]).toMatchObject({ kind: 'cancel', reason: 'stopped by you' });
    expect(items[4]).toMatchObject({ kind: 'error', message: 'no model provider is configured' });
    expect(items.filter((i) => i.kind === 'error')).toHaveLength(2); // r3's error is not doubled
  });

  it('shows streamed text as a pending bubble of an unfinished run only', () => {
    const running = run('r1', 'running', [{ kind: 'input', data: { text: 'hello', from: 'you' } }]);
    const items = buildTranscript([running], { r1: 'You said' });
    expect(items.at(-1)).toEqual({ kind: 'agent', key: 'r1:pending', text: 'You said', streaming: true });
    expect(buildTranscript([{ ...running, status: 'done' }], { r1: 'You said' })).toHaveLength(1);
  });

  it('a tool call without its result is still running', () => {
    const r = run('r1', 'running', [{ kind: 'tool_call', data: { id: 'c', name: 'write_file', input: {} } }]);
    const [item] = buildTranscript([r]);
    expect(item).toMatchObject({ kind: 'tool', name: 'write_file' });
    expect(item && 'output' in item).toBe(false);
    expect(runActivity(r)).toBe('Running write_file…');
    expect(runActivity(run('r2', 'running', []))).toBe('Thinking…');
    expect(runActivity(run('r3', 'queued', []))).toBe('Waiting to start…');
  });
});

describe('pauses in the transcript', () => {
  const pause: Pause = {
    id: 'pz_1',
    run_id: 'r1',
    agent_id: 'ag_1',
    session_id: 'ses_1',
    tool_call_id: '',
    automated: false,
    created_at: T,
    answered_at: T,
    status: 'answered',
    kind: 'approval',
    request: {
      title: 'Run 2 commands',
      reason: '',
      policy: true,
      items: [
        { id: 'c1', title: 'ls', kind: 'command', detail: 'ls', tool: 'run_command', input: { command: 'ls' } },
        { id: 'c2', title: 'rm', kind: 'command', detail: 'rm x', tool: 'run_command', input: { command: 'rm x' } },
      ],
    },
    answer: { decisions: [{ id: 'c1', approved: true, note: '' }, { id: 'c2', approved: false, note: '' }] },
  };
  const r = run(
    'r1',
    'done',
    [
      { kind: 'tool_call', data: { id: 'c1', name: 'run_command', input: { command: 'ls' } } },
      { kind: 'tool_call', data: { id: 'c2', name: 'run_command', input: { command: 'rm x' } } },
      { kind: 'pause', data: { pause_id: 'pz_1', kind: 'approval' } },
      { kind: 'resume', data: { pause_id: 'pz_1', status: 'answered' } },
      { kind: 'tool_result', data: { id: 'c1', name: 'run_command', output: 'a.txt', is_error: false, decision: 'approved' } },
      { kind: 'tool_result', data: { id: 'c2', name: 'run_command', output: 'declined by the person', is_error: true, decision: 'declined' } },
    ],
    { pauses: [pause] },
  );

  it('become pause and resume items carrying the pause, and tool rows carry the decision', () => {
    const items = buildTranscript([r]);
    expect(items.map((i) => i.kind)).toEqual(['tool', 'tool', 'pause', 'resume']);
    expect(items[0]).toMatchObject({ decision: 'approved', output: 'a.txt' });
    expect(items[1]).toMatchObject({ decision: 'declined' });
    expect(items[2]).toMatchObject({ kind: 'pause', pauseKind: 'approval', pause: { id: 'pz_1' } });
    expect(items[3]).toMatchObject({ kind: 'resume', status: 'answered', pause: { id: 'pz_1' } });
  });

  it('hide the tool call that raised a pause: its pause and resume rows stand for it', () => {
    const asked = run(
      'r5',
      'done',
      [
        { kind: 'tool_call', data: { id: 'q1', name: 'ask_question', input: {} } },
        { kind: 'pause', data: { pause_id: 'pz_5', kind: 'question' } },
        { kind: 'tool_result', data: { id: 'q1', name: 'ask_question', output: 'The person answered', is_error: false } },
        { kind: 'resume', data: { pause_id: 'pz_5', status: 'answered' } },
        { kind: 'model', data: { text: 'Thanks' } },
      ],
      { pauses: [{ ...pause, id: 'pz_5', tool_call_id: 'q1' }] },
    );
    expect(buildTranscript([asked]).map((i) => i.kind)).toEqual(['pause', 'resume', 'agent']);
    expect(buildTranscript([{ ...asked, pauses: [] }]).map((i) => i.kind)).toEqual(['tool', 'pause', 'resume', 'agent']);
  });

  it('work without the pause in the run detail', () => {
    const items = buildTranscript([{ ...r, pauses: undefined }]);
    expect(items[2]).toMatchObject({ kind: 'pause', pauseKind: 'approval', pause: undefined });
  });

  it('a paused run waits for you', () => {
    expect(runActivity(run('r9', 'paused', []))).toBe('Waiting for you');
    expect(statusLabel('paused')).toBe('waiting for you');
    expect(statusLabel('done')).toBe('done');
  });
});

describe('PendingText', () => {
  const model = (text: string) => ({ kind: 'model' as const, data: { text } });
  const input = { kind: 'input' as const, data: { text: 'hi', from: 'you' } };

  it('drops a streamed model call once the transcript holds its step, in any order', () => {
    const p = new PendingText();
    p.add('r1', 'You ');
    p.add('r1', 'said');
    expect(p.snapshot()).toEqual({ r1: 'You said' });
    // A transcript fetched before the step was committed keeps the text.
    p.settle([run('r1', 'running', [input])]);
    expect(p.snapshot()).toEqual({ r1: 'You said' });
    // One fetched after the commit but before its run.step event drops it.
    p.settle([run('r1', 'running', [input, model('You said')])]);
    expect(p.snapshot()).toEqual({});
    p.step('r1');
    // The next model call streams into a new segment, kept until its own step.
    p.add('r1', 'More');
    p.settle([run('r1', 'running', [input, model('You said')])]);
    expect(p.snapshot()).toEqual({ r1: 'More' });
    p.settle([run('r1', 'done', [input, model('You said'), model('More')])]);
    expect(p.snapshot()).toEqual({});
  });

  it('counts text the page missed before it opened', () => {
    const p = new PendingText();
    p.add('r1', 'second', 1); // one model step with text is already shown
    p.settle([run('r1', 'running', [input, model('first')])]);
    expect(p.snapshot()).toEqual({ r1: 'second' });
    p.settle([run('r1', 'running', [input, model('first'), model('second')])]);
    expect(p.snapshot()).toEqual({});
  });
});

describe('formatting', () => {
  it('durations', () => {
    expect(formatDuration(null)).toBe('');
    expect(formatDuration(45)).toBe('45 ms');
    expect(formatDuration(1500)).toBe('1.5 s');
    expect(formatDuration(42_000)).toBe('42 s');
    expect(formatDuration(185_000)).toBe('3 m 05 s');
    expect(formatDuration(7_800_000)).toBe('2 h 10 m');
    expect(between('2026-11-30T10:00:00Z', '2026-11-30T10:00:02.5Z')).toBe(2500);
    expect(between(T, null)).toBeNull();
  });

  it('costs', () => {
    expect(formatCost(0)).toBe('$0');
    expect(formatCost(0.000061)).toBe('<$0.01');
    expect(formatCost(0.0012)).toBe('<$0.01');
    expect(formatCost(0.35)).toBe('$0.35');
    expect(formatCost(12.4)).toBe('$12.40');
    expect(formatCost(3, false)).toBe('price unknown');
    expect(exactCost(0.000061)).toBe('$0.000061');
    expect(exactCost(0.0012)).toBe('$0.0012');
    expect(exactCost(1e-9)).toBe('<$0.000001');
    expect(tokenCounts(1234, 350)).toBe('1.2k in · 350 out tokens');
  });

  it('tokens, arguments and JSON', () => {
    expect(formatTokens(950)).toBe('950');
    expect(formatTokens(1234)).toBe('1.2k');
    expect(formatTokens(45_600)).toBe('46k');
    expect(formatTokens(3_400_000)).toBe('3.4M');
    expect(argSummary({ path: 'a.txt', n: 2 })).toBe('path: "a.txt", n: 2');
    expect(argSummary({ content: 'x'.repeat(100) }, 20)).toHaveLength(20);
    expect(argSummary({})).toBe('');
    expect(prettyJson('{"a":1}')).toBe('{\n  "a": 1\n}');
    expect(prettyJson('plain text')).toBe('plain text');
    expect(prettyJson({ a: [1] })).toBe('{\n  "a": [\n    1\n  ]\n}');
  });
});
