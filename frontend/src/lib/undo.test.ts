import { describe, expect, it } from 'vitest';
import { isUndoKey, UndoStack } from './undo';

describe('UndoStack', () => {
  it('undoes the newest first, each once', async () => {
    const done: string[] = [];
    const s = new UndoStack();
    s.push({ label: 'a', undo: async () => void done.push('a') });
    const undoB = s.push({ label: 'b', undo: async () => void done.push('b') });
    expect(await s.undoLast()).toBe(true);
    expect(await undoB()).toBe(false);
    expect(await s.undoLast()).toBe(true);
    expect(await s.undoLast()).toBe(false);
    expect(done).toEqual(['b', 'a']);
  });
  it('a toast can undo an older entry', async () => {
    const done: string[] = [];
    const s = new UndoStack();
    const undoA = s.push({ label: 'a', undo: async () => void done.push('a') });
    s.push({ label: 'b', undo: async () => void done.push('b') });
    expect(await undoA()).toBe(true);
    expect(s.size).toBe(1);
    expect(done).toEqual(['a']);
  });
  it('keeps only the last few', () => {
    const s = new UndoStack(2);
    for (const l of ['a', 'b', 'c']) s.push({ label: l, undo: async () => {} });
    expect(s.size).toBe(2);
    s.clear();
    expect(s.size).toBe(0);
  });
  it('a failed undo is dropped and reported', async () => {
    const s = new UndoStack();
    s.push({ label: 'a', undo: async () => Promise.reject(new Error('gone')) });
    await expect(s.undoLast()).rejects.toThrow('gone');
    expect(s.size).toBe(0);
  });
});

describe('isUndoKey', () => {
  it('is Ctrl+Z or ⌘+Z, not redo', () => {
    const k = { key: 'z', ctrlKey: false, metaKey: false, shiftKey: false, altKey: false };
    expect(isUndoKey({ ...k, ctrlKey: true })).toBe(true);
    expect(isUndoKey({ ...k, metaKey: true })).toBe(true);
    expect(isUndoKey({ ...k, ctrlKey: true, shiftKey: true })).toBe(false);
    expect(isUndoKey(k)).toBe(false);
  });
});
