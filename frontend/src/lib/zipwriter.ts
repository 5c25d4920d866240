// A minimal .zip writer: every entry stored as it is (no compression), with
// its CRC-32, UTF-8 names and Unix rw-r--r-- file modes. Enough to hand a
// skill folder picked in the browser to POST …/skills/import. Also the
// browser-side checks on such a folder (the server refuses the same).

export type ZipEntry = { path: string; data: Uint8Array };

/** The server's limits on one skill (backend/skill MaxFiles, MaxTotalBytes). */
export const MAX_SKILL_FILES = 1000;
export const MAX_SKILL_BYTES = 10 * 1024 * 1024;

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32(data: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < data.length; i++) c = CRC_TABLE[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

const DOS_DATE_1980 = 0x21; // 1980-01-01, time 00:00

/** A .zip holding the entries in order, each stored uncompressed. */
export function makeZip(entries: ZipEntry[]): Uint8Array<ArrayBuffer> {
  const enc = new TextEncoder();
  const names = entries.map((e) => enc.encode(e.path));
  let localSize = 0;
  let centralSize = 0;
  for (const [i, e] of entries.entries()) {
    localSize += 30 + names[i]!.length + e.data.length;
    centralSize += 46 + names[i]!.length;
  }
  if (entries.length > 0xffff || localSize + centralSize > 0xffffffff) throw new Error('too large for a .zip without Zip64');
  const out = new Uint8Array(new ArrayBuffer(localSize + centralSize + 22));
  const v = new DataView(out.buffer);
  let p = 0;
  let c = localSize;
  for (const [i, e] of entries.entries()) {
    const name = names[i]!;
    const crc = crc32(e.data);
    const offset = p;
    v.setUint32(p, 0x04034b50, true);
    v.setUint16(p + 4, 20, true); // version needed: 2.0
    v.setUint16(p + 6, 0x0800, true); // UTF-8 names
    v.setUint16(p + 8, 0, true); // stored
    v.setUint16(p + 10, 0, true); // time
    v.setUint16(p + 12, DOS_DATE_1980, true);
    v.setUint32(p + 14, crc, true);
    v.setUint32(p + 18, e.data.length, true);
    v.setUint32(p + 22, e.data.length, true);
    v.setUint16(p + 26, name.length, true);
    v.setUint16(p + 28, 0, true); // extra
    out.set(name, p + 30);
    out.set(e.data, p + 30 + name.length);
    p += 30 + name.length + e.data.length;

    v.setUint32(c, 0x02014b50, true);
    v.setUint16(c + 4, 0x0314, true); // made by: Unix, 2.0
    v.setUint16(c + 6, 20, true);
    v.setUint16(c + 8, 0x0800, true);
    v.setUint16(c + 10, 0, true);
    v.setUint16(c + 12, 0, true);
    v.setUint16(c + 14, DOS_DATE_1980, true);
    v.setUint32(c + 16, crc, true);
    v.setUint32(c + 20, e.data.length, true);
    v.setUint32(c + 24, e.data.length, true);
    v.setUint16(c + 28, name.length, true);
    // extra, comment, disk, internal attrs: 0
    v.setUint32(c + 38, (0o100644 << 16) >>> 0, true); // a regular file, rw-r--r--
    v.setUint32(c + 42, offset, true);
    out.set(name, c + 46);
    c += 46 + name.length;
  }
  v.setUint32(c, 0x06054b50, true);
  v.setUint16(c + 8, entries.length, true);
  v.setUint16(c + 10, entries.length, true);
  v.setUint32(c + 12, centralSize, true);
  v.setUint32(c + 16, localSize, true);
  return out;
}

/** What a folder picker gives for each file (a File has all three). */
export type PickedFile = { webkitRelativePath: string; name: string; size: number; arrayBuffer(): Promise<ArrayBuffer> };

/** Files every OS or zip tool adds and no skill means (the server skips them too). */
function junk(path: string): boolean {
  const base = path.slice(path.lastIndexOf('/') + 1);
  return path.startsWith('__MACOSX/') || path.includes('/__MACOSX/') || base === '.DS_Store' || base === 'Thumbs.db';
}

/** The files of a picked folder worth sending, by their path inside it (top folder kept). */
export function folderFiles<T extends PickedFile>(files: Iterable<T>): { path: string; file: T }[] {
  const out: { path: string; file: T }[] = [];
  for (const file of files) {
    const path = (file.webkitRelativePath || file.name).replaceAll('\\', '/');
    if (!junk(path)) out.push({ path, file });
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Why a picked folder cannot be a skill, or '' when it may be sent. */
export function folderProblem(files: { path: string; file: { size: number } }[]): string {
  if (files.length === 0) return 'The folder is empty.';
  if (files.length > MAX_SKILL_FILES) return `The folder has ${files.length} files; a skill holds at most ${MAX_SKILL_FILES}.`;
  const total = files.reduce((n, f) => n + f.file.size, 0);
  if (total > MAX_SKILL_BYTES) {
    return `The folder holds ${(total / (1024 * 1024)).toFixed(1)} MiB; a skill holds at most ${MAX_SKILL_BYTES / (1024 * 1024)} MiB.`;
  }
  return '';
}

/** A stored .zip of a picked folder, keeping its top folder; throws the problem when it is refused. */
export async function zipFolder(files: Iterable<PickedFile>): Promise<Uint8Array<ArrayBuffer>> {
  const picked = folderFiles(files);
  const problem = folderProblem(picked);
  if (problem) throw new Error(problem);
  const entries = await Promise.all(picked.map(async ({ path, file }) => ({ path, data: new Uint8Array(await file.arrayBuffer()) })));
  return makeZip(entries);
}
