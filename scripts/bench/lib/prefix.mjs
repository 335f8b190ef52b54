/**
 * The first records of a classic pcap, up to a byte budget and cut at a record boundary, written
 * to another file: the same input at a fraction of its size (scaling runs, tshark on a prefix).
 */
import { closeSync, openSync, readSync, writeSync } from 'node:fs';

const FILE_HEADER = 24;
const RECORD_HEADER = 16;

/** Copies the records of `src` that fit in `maxBytes` to `dst`; returns { bytes, packets }. */
export function writePcapPrefix(src, dst, maxBytes) {
  const inFd = openSync(src, 'r');
  const outFd = openSync(dst, 'w');
  const buf = Buffer.allocUnsafe(8 * 1024 * 1024);
  try {
    let have = readSync(inFd, buf, 0, buf.length, 0);
    let fileOff = 0; // file offset of buf[0]
    const magic = buf.readUInt32LE(0);
    const le = magic === 0xa1b2c3d4 || magic === 0xa1b23c4d;
    if (!le && buf.readUInt32BE(0) !== 0xa1b2c3d4 && buf.readUInt32BE(0) !== 0xa1b23c4d) throw new Error(`${src}: not a classic pcap`);
    let pos = FILE_HEADER;
    let packets = 0;
    for (;;) {
      if (pos + RECORD_HEADER > have) {
        if (!refill()) break;
        continue;
      }
      const len = RECORD_HEADER + (le ? buf.readUInt32LE(pos + 8) : buf.readUInt32BE(pos + 8));
      if (pos + len > have) {
        if (!refill()) break;
        continue;
      }
      if (fileOff + pos + len > maxBytes) break;
      pos += len;
      packets++;
    }
    // Flush whatever of buf is kept.
    writeAll(outFd, buf, pos);
    return { bytes: fileOff + pos, packets };

    /** Writes buf[0, pos) out and reads on from the file; false at its end. */
    function refill() {
      writeAll(outFd, buf, pos);
      buf.copy(buf, 0, pos, have);
      const left = have - pos;
      fileOff += pos;
      pos = 0;
      const n = readSync(inFd, buf, left, buf.length - left, fileOff + left);
      have = left + n;
      return n > 0;
    }
  } finally {
    closeSync(inFd);
    closeSync(outFd);
  }
}

function writeAll(fd, buf, len) {
  let done = 0;
  while (done < len) done += writeSync(fd, buf, done, len - done);
}
