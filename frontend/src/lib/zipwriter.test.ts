import { describe, expect, it } from 'vitest';
import { crc32, folderFiles, folderProblem, makeZip, MAX_SKILL_BYTES, MAX_SKILL_FILES, zipFolder, type PickedFile } from './zipwriter';

type Read = { path: string; data: Uint8Array; crc: number; method: number; flags: number; mode: number };

/** A tiny reader: walks the end record and central directory, checks each local header against it. */
function readZip(zip: Uint8Array): Read[] {
  const v = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  const dec = new TextDecoder();
  const end = zip.length - 22;
  expect(v.getUint32(end, true)).toBe(0x06054b50);
  const count = v.getUint16(end + 10, true);
  expect(v.getUint16(end + 8, true)).toBe(count);
  const cdSize = v.getUint32(end + 12, true);
  const cdOffset = v.getUint32(end + 16, true);
  expect(cdOffset + cdSize).toBe(end);
  const out: Read[] = [];
  let c = cdOffset;
  for (let i = 0; i < count; i++) {
    expect(v.getUint32(c, true)).toBe(0x02014b50);
    const flags = v.getUint16(c + 8, true);
    const method = v.getUint16(c + 10, true);
    const crc = v.getUint32(c + 16, true);
    const csize = v.getUint32(c + 20, true);
    const usize = v.getUint32(c + 24, true);
    const nlen = v.getUint16(c + 28, true);
    const xlen = v.getUint16(c + 30, true);
    const klen = v.getUint16(c + 32, true);
    const mode = v.getUint32(c + 38, true) >>> 16;
    const off = v.getUint32(c + 42, true);
    const path = dec.decode(zip.subarray(c + 46, c + 46 + nlen));
    c += 46 + nlen + xlen + klen;

    expect(v.getUint32(off, true)).toBe(0x04034b50);
    expect(v.getUint16(off + 6, true)).toBe(flags);
    expect(v.getUint16(off + 8, true)).toBe(method);
    expect(v.getUint32(off + 14, true)).toBe(crc);
    expect(v.getUint32(off + 18, true)).toBe(csize);
    expect(v.getUint32(off + 22, true)).toBe(usize);
    const lnlen = v.getUint16(off + 26, true);
    const lxlen = v.getUint16(off + 28, true);
    expect(dec.decode(zip.subarray(off + 30, off + 30 + lnlen))).toBe(path);
    const start = off + 30 + lnlen + lxlen;
    const data = zip.subarray(start, start + csize);
    expect(csize).toBe(usize);
    expect(crc32(data)).toBe(crc);
    out.push({ path, data, crc, method, flags, mode });
  }
  expect(c).toBe(end);
  return out;
}

const enc = new TextEncoder();
const text = (d: Uint8Array) => new TextDecoder().decode(d);

function picked(path: string, body: string | number): PickedFile {
  const data = typeof body === 'string' ? enc.encode(body) : new Uint8Array(body);
  return {
    webkitRelativePath: path,
    name: path.slice(path.lastIndexOf('/') + 1),
    size: data.length,
    arrayBuffer: async () => data.slice().buffer,
  };
}

describe('crc32', () => {
  it('matches the standard check values', () => {
    expect(crc32(enc.encode('123456789'))).toBe(0xcbf43926);
    expect(crc32(new Uint8Array())).toBe(0);
    expect(crc32(enc.encode('The quick brown fox jumps over the lazy dog'))).toBe(0x414fa339);
  });
});

describe('makeZip', () => {
  it('writes a known input byte for byte', () => {
    const zip = makeZip([{ path: 'a.txt', data: enc.encode('hi') }]);
    // local header (30) + name (5) + data (2), central (46) + name (5), end (22)
    expect(zip.length).toBe(30 + 5 + 2 + 46 + 5 + 22);
    const hex = Array.from(zip.subarray(0, 37), (b) => b.toString(16).padStart(2, '0')).join('');
    // signature, version 2.0, UTF-8 flag, stored, time 0, date 1980-01-01, CRC, sizes, name length, no extra, name, data
    expect(hex).toBe('504b0304' + '1400' + '0008' + '0000' + '0000' + '2100' + 'ac2a93d8' + '02000000' + '02000000' + '0500' + '0000' + '612e747874' + '6869');
    expect(crc32(enc.encode('hi'))).toBe(0xd8932aac);
  });

  it('is a valid zip that keeps paths, bytes, CRCs, stored method, UTF-8 flag and file mode', () => {
    const entries = [
      { path: 'notes-skill/SKILL.md', data: enc.encode('---\nname: notes-skill\ndescription: Notes\n---\n\n# Notes\n') },
      { path: 'notes-skill/reference/style.md', data: enc.encode('# Style\n') },
      { path: 'notes-skill/reference/naïve – é.md', data: enc.encode('ü') },
      { path: 'notes-skill/empty.txt', data: new Uint8Array() },
      { path: 'notes-skill/bin.dat', data: Uint8Array.from({ length: 3000 }, (_, i) => (i * 7) & 0xff) },
    ];
    const read = readZip(makeZip(entries));
    expect(read.map((r) => r.path)).toEqual(entries.map((e) => e.path));
    for (const [i, r] of read.entries()) {
      expect(Array.from(r.data)).toEqual(Array.from(entries[i]!.data));
      expect(r.crc).toBe(crc32(entries[i]!.data));
      expect(r.method).toBe(0);
      expect(r.flags & 0x0800).toBe(0x0800);
      expect(r.mode).toBe(0o100644);
    }
  });

  it('writes an empty archive as just the end record', () => {
    const zip = makeZip([]);
    expect(zip.length).toBe(22);
    expect(readZip(zip)).toEqual([]);
  });
});

describe('zipFolder', () => {
  it('keeps the top folder and the paths inside it, and skips OS junk', async () => {
    const zip = await zipFolder([
      picked('notes-skill/reference/style.md', '# Style\n'),
      picked('notes-skill/SKILL.md', '---\nname: notes-skill\ndescription: Notes\n---\n'),
      picked('notes-skill/.DS_Store', 'junk'),
      picked('notes-skill/__MACOSX/x', 'junk'),
    ]);
    const read = readZip(zip);
    expect(read.map((r) => r.path)).toEqual(['notes-skill/SKILL.md', 'notes-skill/reference/style.md']);
    expect(text(read[1]!.data)).toBe('# Style\n');
  });

  it('refuses folders the server would refuse', async () => {
    await expect(zipFolder([])).rejects.toThrow('empty');
    const many = Array.from({ length: MAX_SKILL_FILES + 1 }, (_, i) => picked(`big/f${i}.md`, 'x'));
    await expect(zipFolder(many)).rejects.toThrow(`${MAX_SKILL_FILES + 1} files; a skill holds at most 1000`);
    const huge = [picked('big/SKILL.md', 'x'), { ...picked('big/blob.bin', 0), size: MAX_SKILL_BYTES }];
    await expect(zipFolder(huge)).rejects.toThrow('at most 10 MiB');
    expect(folderProblem(folderFiles([picked('ok/SKILL.md', 'x'), { ...picked('ok/b', 0), size: MAX_SKILL_BYTES - 1 }]))).toBe('');
    expect(folderProblem(folderFiles(Array.from({ length: MAX_SKILL_FILES }, (_, i) => picked(`ok/f${i}`, 'x'))))).toBe('');
  });
});
