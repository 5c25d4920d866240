import { describe, expect, it } from 'vitest';
import { diffLines, diffStats } from './diff';
import { soulAuthor, soulVersionDiff, soulVersionLine } from './soul';
import type { SoulVersion } from './workspace';

const at = '2026-12-01T10:00:00Z';
const versions: SoulVersion[] = [
  { version: 3, body: '# Ada\nBe brief and kind.\n', author: 'agent', created_at: at },
  { version: 2, body: '# Ada\nBe brief.\n', author: 'person', created_at: at },
  { version: 1, body: '# Ada\n', author: '', created_at: at },
];

describe('soul history', () => {
  it('says who wrote each version, not its first line', () => {
    expect(versions.map((v) => soulVersionLine(versions, v, 'Ada'))).toEqual(['Edited by Ada itself', 'Edited by you', 'First soul']);
    expect(soulAuthor({ ...versions[0]!, author: 'api' }, 'Ada')).toBe('an API client');
    expect(soulAuthor({ ...versions[0]!, author: undefined }, 'Ada')).toBe('');
  });

  it('diffs a version against the one before it', () => {
    const lines = diffLines(soulVersionDiff(versions, versions[0]!));
    expect(diffStats(lines)).toEqual({ added: 1, removed: 1 });
    expect(lines.filter((l) => l.kind === 'add').map((l) => l.text)).toEqual(['+Be brief and kind.']);
    expect(diffStats(diffLines(soulVersionDiff(versions, versions[2]!)))).toEqual({ added: 1, removed: 0 });
  });
});
