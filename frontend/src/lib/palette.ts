// A stable colour per agent, derived from its handle (which never changes).

/** FNV-1a, 32 bit. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Hue in [0, 360) for a handle. */
export function handleHue(handle: string): number {
  return hashString(handle) % 360;
}

export type FigureColours = { body: string; shade: string; head: string; ink: string };

export function figureColours(handle: string): FigureColours {
  const h = handleHue(handle);
  return {
    body: `hsl(${h} 62% 56%)`,
    shade: `hsl(${h} 55% 42%)`,
    head: `hsl(${h} 70% 78%)`,
    ink: `hsl(${h} 60% 26%)`,
  };
}
