// Pure geometry of the isometric board: projection, where boxes go, where agents
// stand on them, and which box a screen point falls on. No DOM, no Svelte.

export type Point = { x: number; y: number };

/** Sizes in world units (1 unit is about 1 screen pixel along an axis). */
export const ISO = {
  cell: 104, // floor space of one standing agent, per side
  pad: 26, // free border between a box's edge and its agents
  slab: 24, // thickness of a box
  gap: 64, // space between boxes
  minCols: 2,
  maxCols: 4,
  minRows: 1,
  margin: 36, // around the drawing, in screen pixels
  figureHeight: 78, // how far a figure (with its selection ring) reaches above its feet
  labelDepth: 44, // how far a name label reaches below its feet
} as const;

const COS = Math.cos(Math.PI / 6); // ≈ 0.866
const SIN = 0.5;

/** Projects world (x, y on the floor, z up) to screen coordinates. */
export function project(x: number, y: number, z = 0): Point {
  return { x: (x - y) * COS, y: (x + y) * SIN - z };
}

/** The inverse of project for a point on the plane at height z. */
export function unproject(p: Point, z = 0): { x: number; y: number } {
  const a = p.x / COS; // x - y
  const b = (p.y + z) / SIN; // x + y
  return { x: (a + b) / 2, y: (b - a) / 2 };
}

export type BoxLayout = {
  id: string;
  /** World rectangle of the box's floor. */
  x: number;
  y: number;
  w: number;
  d: number;
  cols: number;
  rows: number;
  /** Screen polygons: top face, the face towards the viewer's left, and towards the right. */
  top: Point[];
  left: Point[];
  right: Point[];
  /** Outline of everything drawn for the slab (for hit testing). */
  outline: Point[];
  /** Where the name label starts: the front-left bottom edge's left end, on the left face. */
  labelAt: Point;
  /** Screen length of the left face's top edge (room for the name). */
  labelRoom: number;
};

export type AgentSpot = { id: string; boxId: string; at: Point; depth: number };

export type BoardLayout = {
  boxes: BoxLayout[];
  agents: AgentSpot[];
  /** Screen bounds of the drawing including margins: use as the SVG viewBox. */
  bounds: { x: number; y: number; width: number; height: number };
};

/** Columns and rows of standing places a box with n agents gets. */
export function boxGrid(n: number): { cols: number; rows: number } {
  const cols = Math.min(ISO.maxCols, Math.max(ISO.minCols, Math.ceil(Math.sqrt(n))));
  const rows = Math.max(ISO.minRows, Math.ceil(n / cols));
  return { cols, rows };
}

/** How many boxes go in one row of the board. */
export function boxesPerRow(n: number): number {
  return Math.max(1, Math.ceil(Math.sqrt(n)));
}

function poly(...pts: [number, number, number][]): Point[] {
  return pts.map(([x, y, z]) => project(x, y, z));
}

export function boxShape(id: string, x: number, y: number, cols: number, rows: number): BoxLayout {
  const w = cols * ISO.cell + 2 * ISO.pad;
  const d = rows * ISO.cell + 2 * ISO.pad;
  const h = ISO.slab;
  const x2 = x + w;
  const y2 = y + d;
  const leftStart = project(x, y2, 0);
  const leftEnd = project(x2, y2, 0);
  return {
    id,
    x,
    y,
    w,
    d,
    cols,
    rows,
    top: poly([x, y, h], [x2, y, h], [x2, y2, h], [x, y2, h]),
    left: poly([x, y2, h], [x2, y2, h], [x2, y2, 0], [x, y2, 0]),
    right: poly([x2, y, h], [x2, y2, h], [x2, y2, 0], [x2, y, 0]),
    outline: poly([x, y, h], [x2, y, h], [x2, y, 0], [x2, y2, 0], [x, y2, 0], [x, y2, h]),
    labelAt: leftStart,
    labelRoom: Math.hypot(leftEnd.x - leftStart.x, leftEnd.y - leftStart.y),
  };
}

/**
 * Lays out boxes (in the order given, which is their position order) in rows,
 * each box sized to fit its agents, and places every agent on its box. Agents
 * whose box is not in the list are left out.
 */
export function layoutBoard(
  boxes: readonly { id: string }[],
  agents: readonly { id: string; box_id: string }[],
): BoardLayout {
  const members = new Map<string, string[]>();
  for (const b of boxes) members.set(b.id, []);
  for (const a of agents) members.get(a.box_id)?.push(a.id);

  const perRow = boxesPerRow(boxes.length);
  const outBoxes: BoxLayout[] = [];
  const outAgents: AgentSpot[] = [];
  let rowY = 0;
  for (let start = 0; start < boxes.length; start += perRow) {
    const row = boxes.slice(start, start + perRow);
    let x = 0;
    let rowDepth = 0;
    for (const b of row) {
      const ids = members.get(b.id) ?? [];
      const { cols, rows } = boxGrid(ids.length);
      const shape = boxShape(b.id, x, rowY, cols, rows);
      outBoxes.push(shape);
      ids.forEach((agentId, i) => {
        const r = Math.floor(i / cols);
        const inRow = Math.min(cols, ids.length - r * cols);
        // Centre a lone partial first row (one agent in the middle of its box);
        // a partial later row stays on the grid: shifted by half a cell, a
        // figure would stand in the name label of the one behind it.
        const c = (i % cols) + (r === 0 ? (cols - inRow) / 2 : 0);
        const wx = x + ISO.pad + (c + 0.5) * ISO.cell;
        const wy = rowY + ISO.pad + (r + 0.5) * ISO.cell;
        outAgents.push({ id: agentId, boxId: b.id, at: project(wx, wy, ISO.slab), depth: wx + wy });
      });
      x += shape.w + ISO.gap;
      rowDepth = Math.max(rowDepth, shape.d);
    }
    rowY += rowDepth + ISO.gap;
  }
  return { boxes: outBoxes, agents: outAgents, bounds: boundsOf(outBoxes, outAgents) };
}

function boundsOf(boxes: BoxLayout[], agents: AgentSpot[]): BoardLayout['bounds'] {
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  const add = (p: Point) => {
    minX = Math.min(minX, p.x);
    minY = Math.min(minY, p.y);
    maxX = Math.max(maxX, p.x);
    maxY = Math.max(maxY, p.y);
  };
  for (const b of boxes) b.outline.forEach(add);
  for (const a of agents) {
    add({ x: a.at.x - ISO.cell / 2, y: a.at.y - ISO.figureHeight });
    add({ x: a.at.x + ISO.cell / 2, y: a.at.y + ISO.labelDepth });
  }
  if (minX === Infinity) return { x: 0, y: 0, width: 2 * ISO.margin, height: 2 * ISO.margin };
  const m = ISO.margin;
  return { x: minX - m, y: minY - m, width: maxX - minX + 2 * m, height: maxY - minY + 2 * m };
}

/** Ray casting: is p inside the polygon? */
export function pointInPolygon(p: Point, polygon: readonly Point[]): boolean {
  let inside = false;
  for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
    const a = polygon[i]!;
    const b = polygon[j]!;
    if (a.y > p.y !== b.y > p.y && p.x < ((b.x - a.x) * (p.y - a.y)) / (b.y - a.y) + a.x) inside = !inside;
  }
  return inside;
}

/** The box drawn under screen point p (the front-most if several), or undefined. */
export function boxAt(layout: BoardLayout, p: Point): BoxLayout | undefined {
  for (let i = layout.boxes.length - 1; i >= 0; i--) {
    const b = layout.boxes[i]!;
    if (pointInPolygon(p, b.outline)) return b;
  }
  return undefined;
}

/** "x1,y1 x2,y2 ..." for an SVG points attribute. */
export function pointsAttr(pts: readonly Point[]): string {
  return pts.map((p) => `${round(p.x)},${round(p.y)}`).join(' ');
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
