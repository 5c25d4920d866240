import { describe, expect, it } from 'vitest';
import {
  backingSize,
  backoff,
  fitSize,
  fromFrame,
  isPaste,
  keyMessage,
  letterbox,
  modifiers,
  mouseMessage,
  moveMessage,
  parseMessage,
  screenSocketUrl,
  toFrame,
  wheelMessage,
} from './screen';

const none = { altKey: false, ctrlKey: false, metaKey: false, shiftKey: false };

describe('letterbox', () => {
  const cases = [
    { name: 'same ratio fills the box', box: { width: 640, height: 400 }, frame: { width: 1280, height: 800 }, want: { left: 0, top: 0, width: 640, height: 400 } },
    { name: 'a tall box: bars above and below', box: { width: 400, height: 600 }, frame: { width: 1280, height: 800 }, want: { left: 0, top: 175, width: 400, height: 250 } },
    { name: 'a wide box: bars left and right', box: { width: 1000, height: 400 }, frame: { width: 1280, height: 800 }, want: { left: 180, top: 0, width: 640, height: 400 } },
    { name: 'a frame smaller than the box is scaled up', box: { width: 800, height: 800 }, frame: { width: 400, height: 200 }, want: { left: 0, top: 200, width: 800, height: 400 } },
    { name: 'no frame yet: empty', box: { width: 800, height: 800 }, frame: { width: 0, height: 0 }, want: { left: 0, top: 0, width: 0, height: 0 } },
    { name: 'a hidden box: empty', box: { width: 0, height: 0 }, frame: { width: 1280, height: 800 }, want: { left: 0, top: 0, width: 0, height: 0 } },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(letterbox(c.box, c.frame)).toEqual(c.want);
    });
  }
});

describe('toFrame', () => {
  const frame = { width: 1280, height: 800 };
  // A 400×600 element at (100, 50): the picture is 400×250 at y 175..425 inside it.
  const el = { left: 100, top: 50, width: 400, height: 600 };
  const cases = [
    { name: 'top-left corner of the picture', at: { x: 100, y: 225 }, want: { x: 0, y: 0 } },
    { name: 'centre', at: { x: 300, y: 350 }, want: { x: 640, y: 400 } },
    { name: 'a quarter across, scaled by 3.2', at: { x: 200, y: 300 }, want: { x: 320, y: 240 } },
    { name: 'on the bar above: nothing', at: { x: 300, y: 100 }, want: null },
    { name: 'on the bar below: nothing', at: { x: 300, y: 600 }, want: null },
    { name: 'left of the element: nothing', at: { x: 50, y: 300 }, want: null },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(toFrame(c.at, el, frame)).toEqual(c.want);
    });
  }

  it('clamps to the nearest edge when asked (a drag leaving the screen)', () => {
    expect(toFrame({ x: 300, y: 100 }, el, frame, true)).toEqual({ x: 640, y: 0 });
    expect(toFrame({ x: 900, y: 900 }, el, frame, true)).toEqual({ x: 1280, y: 800 });
  });

  it('no frame yet: nothing', () => {
    expect(toFrame({ x: 300, y: 350 }, el, { width: 0, height: 0 })).toBeNull();
  });

  it('fromFrame is its inverse', () => {
    const p = { x: 913, y: 77 };
    const page = fromFrame(p, el, frame);
    expect(toFrame(page, el, frame)).toEqual(p);
  });

  it('does not depend on devicePixelRatio (both sides are CSS pixels)', () => {
    // A frame whose JPEG is 2× (a HiDPI page) still maps to its CSS size.
    expect(toFrame({ x: 300, y: 350 }, el, { width: 640, height: 400 })).toEqual({ x: 320, y: 200 });
  });
});

describe('fitSize', () => {
  const frame = { width: 1280, height: 800 };
  const cases = [
    { name: 'room to spare: the real size, centred by the caller', box: { width: 1408, height: 820 }, want: { width: 1280, height: 800 } },
    { name: 'exactly the room: the real size', box: { width: 1280, height: 800 }, want: { width: 1280, height: 800 } },
    { name: 'a narrow window: scaled down by its width', box: { width: 992, height: 620 }, want: { width: 992, height: 620 } },
    { name: 'a short window: scaled down by its height', box: { width: 1400, height: 400 }, want: { width: 640, height: 400 } },
    { name: 'never scaled up', box: { width: 3000, height: 2000 }, want: { width: 1280, height: 800 } },
    { name: 'no frame yet: nothing', box: { width: 800, height: 600 }, frameAt: { width: 0, height: 0 }, want: { width: 0, height: 0 } },
    { name: 'no room: nothing', box: { width: 0, height: 600 }, want: { width: 0, height: 0 } },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(fitSize(c.box, c.frameAt ?? frame)).toEqual(c.want);
    });
  }
  it('never crops: the drawn size fits the box at any window size', () => {
    for (let w = 200; w <= 2000; w += 37) {
      for (let h = 150; h <= 1200; h += 53) {
        const f = fitSize({ width: w, height: h }, frame);
        expect(f.width).toBeLessThanOrEqual(w);
        expect(f.height).toBeLessThanOrEqual(h);
        expect(Math.abs(f.width / f.height - 1.6)).toBeLessThan(0.02);
      }
    }
  });
});

// One mapping for every size: the panel's small screen, the enlarged one at
// the real size and scaled down to fit send the same page point for the same
// spot of the picture: (offset in the picture) × (frame width / shown width).
describe('toFrame at every size', () => {
  const frame = { width: 1280, height: 800 };
  const button = { x: 170, y: 100 }; // a point of the page
  const sizes = [
    { name: 'the panel (a third, letterboxed in a tall box)', el: { left: 900, top: 300, width: 430, height: 500 } },
    { name: 'enlarged, real size', el: { left: 80, top: 60, width: 1280, height: 800 } },
    { name: 'enlarged, scaled to fit a small window', el: { left: 16, top: 58, width: 992, height: 620 } },
  ];
  for (const c of sizes) {
    it(c.name, () => {
      const at = fromFrame(button, c.el, frame);
      expect(toFrame(at, c.el, frame)).toEqual(button);
      const pic = letterbox(c.el, frame);
      const byFormula = {
        x: (at.x - c.el.left - pic.left) * (frame.width / pic.width),
        y: (at.y - c.el.top - pic.top) * (frame.height / pic.height),
      };
      expect(byFormula.x).toBeCloseTo(button.x, 6);
      expect(byFormula.y).toBeCloseTo(button.y, 6);
    });
  }
  it('at the real size a client pixel is a page pixel', () => {
    const el = { left: 80, top: 60, width: 1280, height: 800 };
    expect(toFrame({ x: 80 + 250, y: 60 + 140 }, el, frame)).toEqual({ x: 250, y: 140 });
  });
});

describe('backingSize', () => {
  it('multiplies by devicePixelRatio and rounds', () => {
    expect(backingSize({ width: 400.4, height: 250 }, 2)).toEqual({ width: 801, height: 500 });
    expect(backingSize({ width: 400, height: 250 }, 1.25)).toEqual({ width: 500, height: 313 });
  });
  it('a missing ratio counts as 1, and never 0 pixels', () => {
    expect(backingSize({ width: 400, height: 250 }, 0)).toEqual({ width: 400, height: 250 });
    expect(backingSize({ width: 0, height: 0 }, 2)).toEqual({ width: 1, height: 1 });
  });
});

describe('modifiers', () => {
  const cases = [
    { name: 'none', e: none, want: 0 },
    { name: 'alt', e: { ...none, altKey: true }, want: 1 },
    { name: 'ctrl', e: { ...none, ctrlKey: true }, want: 2 },
    { name: 'meta', e: { ...none, metaKey: true }, want: 4 },
    { name: 'shift', e: { ...none, shiftKey: true }, want: 8 },
    { name: 'ctrl+shift', e: { ...none, ctrlKey: true, shiftKey: true }, want: 10 },
    { name: 'all', e: { altKey: true, ctrlKey: true, metaKey: true, shiftKey: true }, want: 15 },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(modifiers(c.e)).toBe(c.want);
    });
  }
});

describe('keyMessage', () => {
  const cases = [
    { name: 'a letter', e: { ...none, key: 'a', code: 'KeyA' }, want: { type: 'keydown', key: 'a', code: 'KeyA' } },
    { name: 'shift+A carries the bit', e: { ...none, shiftKey: true, key: 'A', code: 'KeyA' }, want: { type: 'keydown', key: 'A', code: 'KeyA', modifiers: 8 } },
    { name: 'ctrl+a', e: { ...none, ctrlKey: true, key: 'a', code: 'KeyA' }, want: { type: 'keydown', key: 'a', code: 'KeyA', modifiers: 2 } },
    { name: 'Escape goes to the page', e: { ...none, key: 'Escape', code: 'Escape' }, want: { type: 'keydown', key: 'Escape', code: 'Escape' } },
    { name: 'Enter', e: { ...none, key: 'Enter', code: 'Enter' }, want: { type: 'keydown', key: 'Enter', code: 'Enter' } },
    { name: 'composing in an input method: left to the composition', e: { ...none, key: 'a', code: 'KeyA', isComposing: true }, want: null },
    { name: 'a dead key: nothing', e: { ...none, key: 'Dead', code: 'Quote' }, want: null },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(keyMessage('keydown', c.e)).toEqual(c.want);
    });
  }
  it('keyup', () => {
    expect(keyMessage('keyup', { ...none, key: 'Tab', code: 'Tab' })).toEqual({ type: 'keyup', key: 'Tab', code: 'Tab' });
  });
  it('isPaste: ctrl+v and cmd+v, not alt', () => {
    expect(isPaste({ ...none, ctrlKey: true, key: 'v', code: 'KeyV' })).toBe(true);
    expect(isPaste({ ...none, metaKey: true, key: 'V', code: 'KeyV' })).toBe(true);
    expect(isPaste({ ...none, key: 'v', code: 'KeyV' })).toBe(false);
    expect(isPaste({ ...none, ctrlKey: true, altKey: true, key: 'v', code: 'KeyV' })).toBe(false);
  });
});

describe('mouse messages', () => {
  const p = { x: 10, y: 20 };
  it('buttons by number; back/forward buttons send nothing', () => {
    expect(mouseMessage('mousedown', p, { ...none, button: 0, detail: 1 })).toEqual({ type: 'mousedown', x: 10, y: 20, button: 'left', click_count: 1 });
    expect(mouseMessage('mouseup', p, { ...none, button: 2, detail: 1 })).toEqual({ type: 'mouseup', x: 10, y: 20, button: 'right', click_count: 1 });
    expect(mouseMessage('mousedown', p, { ...none, button: 1, detail: 0 })).toEqual({ type: 'mousedown', x: 10, y: 20, button: 'middle', click_count: 1 });
    expect(mouseMessage('mousedown', p, { ...none, button: 3, detail: 1 })).toBeNull();
  });
  it('the second press of a double click counts 2; shift-click carries the bit', () => {
    expect(mouseMessage('mousedown', p, { ...none, shiftKey: true, button: 0, detail: 2 })).toEqual({
      type: 'mousedown',
      x: 10,
      y: 20,
      button: 'left',
      click_count: 2,
      modifiers: 8,
    });
  });
  it('move', () => {
    expect(moveMessage(p, none)).toEqual({ type: 'mousemove', x: 10, y: 20 });
  });
  it('wheel deltas in pixels; lines and pages converted', () => {
    const frame = { width: 1280, height: 800 };
    expect(wheelMessage(p, { ...none, deltaX: 0, deltaY: 120, deltaMode: 0 }, frame)).toEqual({ type: 'wheel', x: 10, y: 20, delta_x: 0, delta_y: 120 });
    expect(wheelMessage(p, { ...none, deltaX: 0, deltaY: 3, deltaMode: 1 }, frame)).toMatchObject({ delta_y: 120 });
    expect(wheelMessage(p, { ...none, deltaX: 0, deltaY: -1, deltaMode: 2 }, frame)).toMatchObject({ delta_y: -800 });
    expect(wheelMessage(p, { ...none, ctrlKey: true, deltaX: 5.4, deltaY: 0, deltaMode: 0 }, frame)).toMatchObject({ delta_x: 5, modifiers: 2 });
  });
});

describe('parseMessage', () => {
  it('a frame header', () => {
    expect(parseMessage('{"type":"frame","width":1280,"height":800,"url":"https://a.example/","title":"A"}')).toEqual({
      type: 'frame',
      width: 1280,
      height: 800,
      url: 'https://a.example/',
      title: 'A',
    });
  });
  it('a frame without a size is no frame', () => {
    expect(parseMessage('{"type":"frame","width":0,"height":800}')).toBeUndefined();
  });
  it('a state: the rest of the object', () => {
    expect(parseMessage('{"type":"state","running":true,"in_control":false}')).toEqual({ type: 'state', state: { running: true, in_control: false } });
  });
  it('a refused input', () => {
    expect(parseMessage('{"type":"error","message":"take over the browser before sending input to it"}')).toEqual({
      type: 'error',
      message: 'take over the browser before sending input to it',
    });
    expect(parseMessage('{"type":"error"}')).toBeUndefined();
  });
  it('anything else is ignored', () => {
    expect(parseMessage('not json')).toBeUndefined();
    expect(parseMessage('"frame"')).toBeUndefined();
    expect(parseMessage('{"type":"hello"}')).toBeUndefined();
  });
});

describe('screenSocketUrl', () => {
  const path = '/api/workspaces/w1/agents/a1/browser/screen';
  it('a page served by rerun: relative to the page, ws:', () => {
    const page = { href: 'http://127.0.0.1:7777/', protocol: 'http:', hostname: '127.0.0.1' };
    expect(screenSocketUrl(path, page, 'http://127.0.0.1:7777', 'secret')).toBe('ws://127.0.0.1:7777/api/workspaces/w1/agents/a1/browser/screen');
  });
  it('https → wss', () => {
    const page = { href: 'https://rerun.example/', protocol: 'https:', hostname: 'rerun.example' };
    expect(screenSocketUrl(path, page)).toBe('wss://rerun.example/api/workspaces/w1/agents/a1/browser/screen');
  });
  it('the desktop window (wails://): the local server, with the token', () => {
    const page = { href: 'wails://wails/', protocol: 'wails:', hostname: 'wails' };
    expect(screenSocketUrl(path, page, 'http://127.0.0.1:7777', 'se cret')).toBe(
      'ws://127.0.0.1:7777/api/workspaces/w1/agents/a1/browser/screen?token=se+cret',
    );
  });
  it('the desktop window on Windows (http://wails.localhost): the local server too', () => {
    const page = { href: 'http://wails.localhost/', protocol: 'http:', hostname: 'wails.localhost' };
    expect(screenSocketUrl(path, page, 'http://127.0.0.1:7777/', 't')).toBe('ws://127.0.0.1:7777/api/workspaces/w1/agents/a1/browser/screen?token=t');
  });
});

describe('backoff', () => {
  it('doubles from half a second up to 10 seconds', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 50].map((n) => backoff(n))).toEqual([500, 1000, 2000, 4000, 8000, 10_000, 10_000, 10_000]);
  });
  it('jitter adds up to a fifth', () => {
    expect(backoff(1, 0.5)).toBe(1100);
    expect(backoff(5, 1)).toBe(12_000);
    expect(backoff(0, 7)).toBe(600);
  });
  it('a negative attempt counts as the first', () => {
    expect(backoff(-3)).toBe(500);
  });
});
