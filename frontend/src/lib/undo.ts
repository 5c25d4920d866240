// What the person can take back (Ctrl/⌘+Z, or a toast's Undo): the last few
// board changes, newest last. An entry runs once; a failed undo is dropped.

export type Undoable = { label: string; undo: () => Promise<void> };

export class UndoStack {
  private items: Undoable[] = [];
  constructor(private readonly limit = 20) {}

  /** Records a change; returns a function that undoes this entry (if still there). */
  push(item: Undoable): () => Promise<boolean> {
    this.items.push(item);
    if (this.items.length > this.limit) this.items.shift();
    return () => this.take(item);
  }

  get size(): number {
    return this.items.length;
  }

  /** Undoes the newest entry; false when there is none. */
  async undoLast(): Promise<boolean> {
    const last = this.items.at(-1);
    return last ? this.take(last) : false;
  }

  /** Drops everything (another workspace shows). */
  clear() {
    this.items = [];
  }

  private async take(item: Undoable): Promise<boolean> {
    const i = this.items.indexOf(item);
    if (i < 0) return false;
    this.items.splice(i, 1);
    await item.undo();
    return true;
  }
}

/** Whether a key press is "undo" (Ctrl+Z, or ⌘+Z on a Mac), not redo. */
export function isUndoKey(e: Pick<KeyboardEvent, 'key' | 'ctrlKey' | 'metaKey' | 'shiftKey' | 'altKey'>): boolean {
  return (e.key === 'z' || e.key === 'Z') && (e.ctrlKey || e.metaKey) && !e.shiftKey && !e.altKey;
}
