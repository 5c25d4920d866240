// A unified diff, line by line, for the approval card (pure).

/** add: "+x", del: "-x", hunk: "@@ … @@", file: the headers of one file, context: " x", meta: "\ No newline…". */
export type DiffLineKind = 'add' | 'del' | 'hunk' | 'file' | 'context' | 'meta';
export type DiffLine = { kind: DiffLineKind; text: string };

const FILE_HEADER = /^(diff |index |new file mode|deleted file mode|similarity index|rename (from|to) |old mode|new mode)/;

const HUNK = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/;

/**
 * Classifies each line of a unified diff. A hunk header's line counts say where
 * the hunk ends, so "--- x" inside it is a removed line and after it a file
 * header. A hunk without counts ("@@" alone, as people write them) ends at a
 * "---"/"+++" pair.
 */
export function diffLines(diff: string): DiffLine[] {
  const lines = diff.replace(/\r\n/g, '\n').replace(/\n$/, '').split('\n');
  const out: DiffLine[] = [];
  let inHunk = false;
  /** Old and new lines left in the hunk; null when its header had no counts. */
  let left: { old: number; new: number } | null = null;
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!;
    if (inHunk && left && left.old <= 0 && left.new <= 0 && !text.startsWith('\\')) inHunk = false;
    let kind: DiffLineKind;
    if (text.startsWith('@@')) {
      kind = 'hunk';
      inHunk = true;
      const m = HUNK.exec(text);
      left = m ? { old: Number(m[1] ?? 1), new: Number(m[2] ?? 1) } : null;
    } else if (!inHunk && (FILE_HEADER.test(text) || text.startsWith('--- ') || text.startsWith('+++ '))) {
      kind = 'file';
    } else if (inHunk && !left && text.startsWith('--- ') && lines[i + 1]?.startsWith('+++ ')) {
      kind = 'file';
      inHunk = false;
    } else if (inHunk && !left && FILE_HEADER.test(text)) {
      kind = 'file';
      inHunk = false;
    } else if (text.startsWith('+')) {
      kind = 'add';
    } else if (text.startsWith('-')) {
      kind = 'del';
    } else if (text.startsWith('\\')) {
      kind = 'meta';
    } else {
      kind = inHunk || text.startsWith(' ') ? 'context' : 'file';
    }
    if (left && inHunk && kind !== 'hunk') {
      if (kind === 'add') left.new--;
      else if (kind === 'del') left.old--;
      else if (kind === 'context') {
        left.old--;
        left.new--;
      }
    }
    out.push({ kind, text });
  }
  return out;
}

/** Lines added and removed. */
export function diffStats(lines: DiffLine[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const l of lines) {
    if (l.kind === 'add') added++;
    else if (l.kind === 'del') removed++;
  }
  return { added, removed };
}

/** A diff line for people: no file headers, no +/- marks, hunks as gaps. */
export type ReadableLine = { kind: 'add' | 'del' | 'same' | 'gap' | 'meta'; text: string };

/**
 * The lines of a unified diff as a person reads them: "--- v1 / +++ v2" and
 * "@@ -1,3 +1,4 @@" go (a gap between two hunks stays, as "⋯"), the leading
 * "+", "-" or " " is dropped (the line's kind says it).
 */
export function readableLines(lines: DiffLine[]): ReadableLine[] {
  const out: ReadableLine[] = [];
  let hunks = 0;
  for (const l of lines) {
    switch (l.kind) {
      case 'file':
        break;
      case 'hunk':
        if (hunks++ > 0) out.push({ kind: 'gap', text: '⋯' });
        break;
      case 'add':
      case 'del':
        out.push({ kind: l.kind, text: l.text.slice(1) });
        break;
      case 'context':
        out.push({ kind: 'same', text: l.text.startsWith(' ') ? l.text.slice(1) : l.text });
        break;
      case 'meta':
        out.push({ kind: 'meta', text: l.text.replace(/^\\ ?/, '') });
        break;
    }
  }
  return out;
}
