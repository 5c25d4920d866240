import { describe, expect, it } from 'vitest';
import { explainError } from './errortext';

describe('explainError', () => {
  it('says a refused connection in plain words and keeps the text for Details', () => {
    const raw =
      'transport error: failed to send request: failed to send request: Post "http://127.0.0.1:9/mcp": dial tcp 127.0.0.1:9: connect: connection refused';
    const e = explainError(raw);
    expect(e.summary).toMatch(/did not answer/);
    expect(e.action).toMatch(/running/);
    expect(e.detail).toBe(raw);
    expect(e.summary + e.action).not.toMatch(/dial|tcp|transport/);
  });

  it('tells a bad key from an unreachable host and a slow one', () => {
    expect(explainError('openai: 401 Unauthorized: Incorrect API key provided').summary).toMatch(/key or token/);
    expect(explainError('dial tcp: lookup mcp.exmaple.com on 127.0.0.53:53: no such host').summary).toMatch(/could not be found/);
    expect(explainError('context deadline exceeded').summary).toMatch(/too long/);
    expect(explainError('anthropic: 429 Too Many Requests').summary).toMatch(/limiting/);
    expect(explainError(new TypeError('Failed to fetch')).summary).toMatch(/its own service/);
    expect(explainError('exec: "npx": executable file not found in $PATH').summary).toMatch(/program/);
  });

  it('passes a plain sentence through as one, with no Details', () => {
    expect(explainError('there is already a skill named weekly-report: open it, or pick another name')).toEqual({
      summary: 'There is already a skill named weekly-report: open it, or pick another name.',
      action: '',
      detail: '',
    });
  });

  it('hides unknown technical text behind Details', () => {
    const e = explainError('rpc: json: cannot unmarshal string into Go value of type int');
    expect(e.summary).toBe('Something went wrong.');
    expect(e.detail).toMatch(/unmarshal/);
  });

  it('never shows an empty message', () => {
    expect(explainError('').summary).toBe('Something went wrong.');
    expect(explainError(undefined).summary).toBe('Something went wrong.');
  });
});
