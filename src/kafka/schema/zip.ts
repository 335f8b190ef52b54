/**
 * Just enough of the zip format (PKWARE APPNOTE.TXT, sections 4.3.7, 4.3.12 and 4.3.16) to read the
 * schema files out of a kafka-clients jar: the central directory is found from the end-of-central-
 * directory record, and each wanted entry is read from its local header, stored (method 0) or
 * deflated (method 8, node:zlib's inflateRawSync). Every offset and size is checked against the
 * file, and output is bounded per entry, so a hostile jar is a SchemaError, never a crash or a
 * zip bomb. Zip64 archives are refused (a clients jar is a few MB).
 */
import { inflateRawSync } from 'node:zlib';
import { SchemaError } from './model.js';

export interface ZipEntry {
  name: string;
  data: Buffer;
}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

export function readZipEntries(
  zip: Buffer,
  where: string,
  wanted: (name: string) => boolean,
  maxEntryBytes: number,
  maxEntries: number,
): ZipEntry[] {
  const bad = (what: string): never => {
    throw new SchemaError(`${where}: not a readable jar (${what})`);
  };
  // The EOCD record is 22 bytes plus a comment of at most 65535.
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 0xffff); i--) {
    if (zip.readUInt32LE(i) === EOCD) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) bad('no end of central directory record');
  const count = zip.readUInt16LE(eocd + 10);
  const cdSize = zip.readUInt32LE(eocd + 12);
  const cdOffset = zip.readUInt32LE(eocd + 16);
  if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) bad('zip64 is not supported');
  if (cdOffset + cdSize > eocd) bad('central directory outside the file');
  const out: ZipEntry[] = [];
  let p = cdOffset;
  for (let n = 0; n < count; n++) {
    if (p + 46 > cdOffset + cdSize || zip.readUInt32LE(p) !== CENTRAL) bad(`central directory entry ${n} is damaged`);
    const method = zip.readUInt16LE(p + 10);
    const compressed = zip.readUInt32LE(p + 20);
    const size = zip.readUInt32LE(p + 24);
    const nameLen = zip.readUInt16LE(p + 28);
    const extraLen = zip.readUInt16LE(p + 30);
    const commentLen = zip.readUInt16LE(p + 32);
    const local = zip.readUInt32LE(p + 42);
    if (p + 46 + nameLen > cdOffset + cdSize) bad(`central directory entry ${n} is damaged`);
    const name = zip.toString('utf8', p + 46, p + 46 + nameLen);
    p += 46 + nameLen + extraLen + commentLen;
    if (!wanted(name)) continue;
    if (out.length >= maxEntries) bad(`more than ${maxEntries} schema entries`);
    if (size > maxEntryBytes) bad(`${name} is larger than ${maxEntryBytes} bytes`);
    if (local + 30 > zip.length || zip.readUInt32LE(local) !== LOCAL) bad(`${name}: damaged local header`);
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    if (start + compressed > zip.length) bad(`${name} runs past the end of the file`);
    const body = zip.subarray(start, start + compressed);
    let data: Buffer;
    if (method === 0) {
      data = Buffer.from(body);
    } else if (method === 8) {
      try {
        data = inflateRawSync(body, { maxOutputLength: maxEntryBytes });
      } catch (e) {
        return bad(`${name} does not inflate: ${(e as Error).message}`);
      }
    } else {
      return bad(`${name} uses compression method ${method}`);
    }
    if (data.length !== size) bad(`${name} inflates to ${data.length} bytes, the directory says ${size}`);
    out.push({ name, data });
  }
  return out;
}
