import { describe, expect, it } from 'vitest';
import { diffLines, diffStats, readableLines } from './diff';

const kinds = (d: string) => diffLines(d).map((l) => l.kind);

describe('diffLines', () => {
  it('classifies a git diff: headers, hunks, added, removed and context lines', () => {
    const d = [
      'diff --git a/app.py b/app.py',
      'index 1a2b3c..4d5e6f 100644',
      '--- a/app.py',
      '+++ b/app.py',
      '@@ -1,3 +1,3 @@ def main():',
      ' import os',
      '-print("hi")',
      '+print("hello")',
      ' ',
      '\\ No newline at end of file',
    ].join('\n');
    expect(kinds(d)).toEqual(['file', 'file', 'file', 'file', 'hunk', 'context', 'del', 'add', 'context', 'meta']);
  });

  it('reads "--- x" and "+++ x" inside a hunk as removed and added lines', () => {
    const d = ['@@ -1,2 +1,2 @@', '--- old rule', '+++ new rule', ' same'].join('\n');
    expect(kinds(d)).toEqual(['hunk', 'del', 'add', 'context']);
  });

  it('starts a new file on a "---"/"+++" pair inside a hunk', () => {
    const d = ['--- a/x', '+++ b/x', '@@ -1 +1 @@', '-a', '+b', '--- a/y', '+++ b/y', '@@ -1 +1 @@', '-c', '+d'].join('\n');
    expect(kinds(d)).toEqual(['file', 'file', 'hunk', 'del', 'add', 'file', 'file', 'hunk', 'del', 'add']);
  });

  it('handles CRLF, a trailing newline and text before the diff', () => {
    const d = 'Update the greeting\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n';
    const lines = diffLines(d);
    expect(lines.map((l) => l.kind)).toEqual(['file', 'hunk', 'del', 'add']);
    expect(lines[3]!.text).toBe('+b');
  });

  it('counts added and removed lines', () => {
    expect(diffStats(diffLines('@@ -1,2 +1,3 @@\n-a\n+b\n+c\n d'))).toEqual({ added: 2, removed: 1 });
  });
});

describe('hunk counts', () => {
  it('without counts, a hunk ends at a "---"/"+++" pair', () => {
    const d = ['@@', '-a', '+b', ' c', '--- a/y', '+++ b/y', '@@', '-c'].join('\n');
    expect(kinds(d)).toEqual(['hunk', 'del', 'add', 'context', 'file', 'file', 'hunk', 'del']);
  });

  it('end a hunk, so what follows is the next file', () => {
    const d = ['--- a/x', '+++ b/x', '@@ -1,2 +1,2 @@', '--- old', '+++ new', ' same', '--- a/y', '+++ b/y', '@@ -1 +1 @@', '-c', '+d'].join('\n');
    expect(kinds(d)).toEqual(['file', 'file', 'hunk', 'del', 'add', 'context', 'file', 'file', 'hunk', 'del', 'add']);
  });
});

describe('readableLines', () => {
  it('drops the headers and the +/- marks, keeping a gap between hunks', () => {
    const diff = '--- v1\n+++ v2\n@@ -1,2 +1,2 @@\n # Ada\n-Be brief.\n+Be brief and kind.\n@@ -9,1 +9,1 @@\n-old\n+new\n\\ No newline at end of file\n';
    expect(readableLines(diffLines(diff))).toEqual([
      { kind: 'same', text: '# Ada' },
      { kind: 'del', text: 'Be brief.' },
      { kind: 'add', text: 'Be brief and kind.' },
      { kind: 'gap', text: '⋯' },
      { kind: 'del', text: 'old' },
      { kind: 'add', text: 'new' },
      { kind: 'meta', text: 'No newline at end of file' },
    ]);
  });
});
