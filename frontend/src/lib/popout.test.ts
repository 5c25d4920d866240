import { describe, expect, it } from 'vitest';
import { desktopHash, parseDesktopHash, popOutTitle, popOutUrl, popupFeatures } from './popout';

describe('popout', () => {
  it('names a Desktop in the fragment and reads it back', () => {
    expect(desktopHash('ws_1', 'ag_2')).toBe('#desktop=ws_1/ag_2');
    expect(parseDesktopHash('#desktop=ws_1/ag_2')).toEqual({ workspace: 'ws_1', agent: 'ag_2' });
    expect(parseDesktopHash(desktopHash('a b', 'c/d'))).toEqual({ workspace: 'a b', agent: 'c/d' });
  });

  it('reads nothing else as a Desktop', () => {
    for (const h of ['', '#', '#desktop=', '#desktop=ws', '#desktop=ws/', '#desktop=/ag', '#desktop=a/b/c', '#board', '#desktop=%E0%A4%A/x', '#desktop=%20/x']) {
      expect(parseDesktopHash(h), h).toBeNull();
    }
  });

  it('opens the same page with the fragment and no query: the cookie signs the window in', () => {
    expect(popOutUrl({ origin: 'http://127.0.0.1:7777', pathname: '/' }, 'ws', 'ag')).toBe('http://127.0.0.1:7777/#desktop=ws/ag');
  });

  it('sizes the window for the page at its real size, within the screen', () => {
    expect(popupFeatures({ width: 1280, height: 800 }, { width: 1920, height: 1040 })).toBe('popup,width=1304,height=873');
    expect(popupFeatures({ width: 1280, height: 800 }, { width: 1366, height: 728 })).toBe('popup,width=1304,height=728');
    expect(popupFeatures({ width: 200, height: 100 }, { width: 0, height: 0 })).toBe('popup,width=480,height=360');
  });

  it('titles the window with whose Desktop it is', () => {
    expect(popOutTitle('Ada')).toBe('Ada — Desktop — Rerun');
  });
});
