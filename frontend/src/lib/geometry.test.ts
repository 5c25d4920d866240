import { describe, expect, it } from 'vitest';
import {
  ISO,
  boxAt,
  boxGrid,
  boxesPerRow,
  layoutBoard,
  pointInPolygon,
  pointsAttr,
  project,
  unproject,
} from './geometry';

const close = (a: number, b: number) => Math.abs(a - b) < 1e-9;

describe('project', () => {
  it('maps the origin to the origin', () => {
    expect(project(0, 0, 0)).toEqual({ x: 0, y: 0 });
  });
  it('sends +x down-right and +y down-left by the same amount', () => {
    const px = project(100, 0);
    const py = project(0, 100);
    expect(px.x).toBeGreaterThan(0);
    expect(py.x).toBeLessThan(0);
    expect(close(px.x, -py.x)).toBe(true);
    expect(close(px.y, py.y)).toBe(true);
    expect(close(px.y, 50)).toBe(true);
  });
  it('sends +z straight up', () => {
    const p = project(10, 20, 30);
    const q = project(10, 20, 0);
    expect(close(p.x, q.x)).toBe(true);
    expect(close(q.y - p.y, 30)).toBe(true);
  });
  it('is undone by unproject at the same height', () => {
    for (const [x, y, z] of [
      [0, 0, 0],
      [120, 40, 0],
      [-30, 75, 24],
    ] as const) {
      const back = unproject(project(x, y, z), z);
      expect(close(back.x, x) && close(back.y, y)).toBe(true);
    }
  });
});

describe('boxGrid', () => {
  const cases: [string, number, number, number][] = [
    ['empty box keeps two places', 0, 2, 1],
    ['one agent', 1, 2, 1],
    ['two agents side by side', 2, 2, 1],
    ['three agents wrap', 3, 2, 2],
    ['five agents', 5, 3, 2],
    ['nine agents square', 9, 3, 3],
    ['many agents cap the width', 30, 4, 8],
  ];
  for (const [name, n, cols, rows] of cases) {
    it(name, () => {
      const g = boxGrid(n);
      expect(g).toEqual({ cols, rows });
      expect(g.cols * g.rows).toBeGreaterThanOrEqual(n);
    });
  }
});

describe('boxesPerRow', () => {
  it.each([
    [0, 1],
    [1, 1],
    [3, 2],
    [4, 2],
    [5, 3],
    [10, 4],
  ])('%i boxes give %i per row', (n, want) => {
    expect(boxesPerRow(n)).toBe(want);
  });
});

describe('layoutBoard', () => {
  const boxes = [{ id: 'a' }, { id: 'b' }, { id: 'c' }];
  const agents = [
    { id: 'x1', box_id: 'a' },
    { id: 'x2', box_id: 'a' },
    { id: 'x3', box_id: 'a' },
    { id: 'y1', box_id: 'b' },
    { id: 'lost', box_id: 'nowhere' },
  ];
  const layout = layoutBoard(boxes, agents);

  it('keeps boxes in the given (position) order', () => {
    expect(layout.boxes.map((b) => b.id)).toEqual(['a', 'b', 'c']);
  });

  it('sizes each box to fit its agents', () => {
    const [a, b] = layout.boxes;
    expect(a!.rows).toBe(2);
    expect(b!.rows).toBe(1);
    expect(a!.d).toBeGreaterThan(b!.d);
    expect(a!.w).toBe(2 * ISO.cell + 2 * ISO.pad);
  });

  it('never lets two boxes overlap on the floor', () => {
    for (let i = 0; i < layout.boxes.length; i++)
      for (let j = i + 1; j < layout.boxes.length; j++) {
        const p = layout.boxes[i]!;
        const q = layout.boxes[j]!;
        const apart = p.x + p.w <= q.x || q.x + q.w <= p.x || p.y + p.d <= q.y || q.y + q.d <= p.y;
        expect(apart, `${p.id} and ${q.id}`).toBe(true);
      }
  });

  it('places every agent of a known box on the top face of its box, and drops the rest', () => {
    expect(layout.agents.map((a) => a.id).sort()).toEqual(['x1', 'x2', 'x3', 'y1']);
    for (const spot of layout.agents) {
      const box = layout.boxes.find((b) => b.id === spot.boxId)!;
      expect(pointInPolygon(spot.at, box.top), spot.id).toBe(true);
      expect(boxAt(layout, spot.at)?.id).toBe(spot.boxId);
    }
  });

  it('gives agents distinct places', () => {
    const keys = new Set(layout.agents.map((a) => `${Math.round(a.at.x)},${Math.round(a.at.y)}`));
    expect(keys.size).toBe(layout.agents.length);
  });

  it('centres a lone agent on its box', () => {
    const spot = layout.agents.find((a) => a.id === 'y1')!;
    const box = layout.boxes.find((b) => b.id === 'b')!;
    const centre = project(box.x + box.w / 2, box.y + box.d / 2, ISO.slab);
    expect(close(spot.at.x, centre.x) && close(spot.at.y, centre.y)).toBe(true);
  });

  it('never stands a figure in the name label of another, whatever the count', () => {
    // A label reaches ~70 px either side of the feet and ~34 px below them; a
    // figure is ~36 px wide and ~70 px tall above its feet.
    for (let n = 1; n <= 16; n++) {
      const ids = Array.from({ length: n }, (_, i) => ({ id: `a${i}`, box_id: 'b' }));
      const { agents } = layoutBoard([{ id: 'b' }], ids);
      for (const label of agents)
        for (const fig of agents) {
          if (fig === label) continue;
          const dx = Math.abs(fig.at.x - label.at.x);
          const figTop = fig.at.y - 70;
          const overlaps = dx < 70 + 18 && figTop < label.at.y + 34 && fig.at.y > label.at.y;
          expect(overlaps, `${n} agents: ${fig.id} stands in ${label.id}'s label`).toBe(false);
        }
    }
  });

  it('has bounds that contain every box and figure', () => {
    const { bounds } = layout;
    const inside = (p: { x: number; y: number }) =>
      p.x >= bounds.x && p.y >= bounds.y && p.x <= bounds.x + bounds.width && p.y <= bounds.y + bounds.height;
    for (const b of layout.boxes) for (const p of b.outline) expect(inside(p)).toBe(true);
    for (const a of layout.agents) expect(inside({ x: a.at.x, y: a.at.y - ISO.figureHeight })).toBe(true);
  });

  it('has small non-empty bounds for an empty board', () => {
    const empty = layoutBoard([], []);
    expect(empty.boxes).toEqual([]);
    expect(empty.bounds.width).toBeGreaterThan(0);
  });
});

describe('boxAt', () => {
  const layout = layoutBoard([{ id: 'a' }, { id: 'b' }], []);
  it('finds the box under a point on its top or side faces', () => {
    const a = layout.boxes[0]!;
    const top = project(a.x + 10, a.y + 10, ISO.slab);
    const side = project(a.x + a.w / 2, a.y + a.d, ISO.slab / 2);
    expect(boxAt(layout, top)?.id).toBe('a');
    expect(boxAt(layout, side)?.id).toBe('a');
  });
  it('finds nothing in the gap between boxes', () => {
    const a = layout.boxes[0]!;
    const gap = project(a.x + a.w + ISO.gap / 2, a.y + a.d / 2, ISO.slab);
    expect(boxAt(layout, gap)).toBeUndefined();
  });
});

describe('pointsAttr', () => {
  it('formats points for SVG with two decimals', () => {
    expect(pointsAttr([{ x: 1, y: 2.3456 }, { x: -0.5, y: 0 }])).toBe('1,2.35 -0.5,0');
  });
});
