// The soul's version history as a person reads it: who wrote each version and
// what it changed from the one before.
import { versionDiff } from './brain';
import type { SoulVersion } from './workspace';

/** Who wrote a version, as the history says it ("you", "Ada itself", …). */
export function soulAuthor(v: SoulVersion, agentName: string): string {
  switch (v.author) {
    case 'person':
      return 'you';
    case 'agent':
      return agentName ? `${agentName} itself` : 'the coworker itself';
    case 'api':
      return 'an API client';
  }
  return '';
}

/** The line a version is listed by: what happened and who did it. */
export function soulVersionLine(versions: SoulVersion[], v: SoulVersion, agentName: string): string {
  const who = soulAuthor(v, agentName);
  const first = !versions.some((o) => o.version < v.version);
  if (first) return who ? `First soul, by ${who}` : 'First soul';
  return who ? `Edited by ${who}` : 'Edited';
}

/** The change this version made to the one before it (a unified diff; DiffView reads it). */
export function soulVersionDiff(versions: SoulVersion[], v: SoulVersion): string {
  const prev = versions.find((o) => o.version < v.version);
  return versionDiff(prev?.body ?? '', v.body, prev ? `v${prev.version}` : '(no soul)', `v${v.version}`);
}
