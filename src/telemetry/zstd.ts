/**
 * A bounded zstd decoder (RFC 8878) for PushTelemetry's Metrics. Its table readers (FSE, Huffman)
 * and sequence loop follow fzstd 0.1.1 (Arjun Barrett, MIT licence), which kcid used before; what
 * differs is what fzstd does not check, and which let 1 KB of input keep it busy for minutes:
 *
 * - fzstd writes a sequence's literals and match whatever their lengths, into a block buffer whose
 *   writes past its end are dropped: 40,000 sequences of 65 KB matches are 2.6 G byte copies for
 *   128 KB of output. Here a block's sequences may produce at most the block's maximum size
 *   (min(window, 128 KiB), RFC 8878 3.1.1.2.4), checked before each copy, and literals at most
 *   what the literals section holds.
 * - fzstd's Huffman weight loop never ends on an FSE table whose states read no bits; here it
 *   stops at 255 weights (RFC 8878 4.2.1.2).
 * - codes past the tables (a literal length code > 35, match length > 52, offset > 25), offsets
 *   before the frame's start, a dictionary, a block larger than its maximum, and a bit stream not
 *   consumed exactly are refused.
 *
 * So every step consumes input or produces output within the limit: the work is linear in input
 * plus output, and the output grows with what was produced (Output), never from a declared size.
 *
 * fzstd's licence, for the parts that follow it, is the legal comment below (kept in the bundle).
 */
/*!
 * fzstd 0.1.1 (the table readers and sequence loop of kcid's src/telemetry/zstd.ts follow it):
 *   MIT License. Copyright (c) 2020 Arjun Barrett.
 *   Permission is hereby granted, free of charge, to any person obtaining a copy of this software
 *   and associated documentation files (the "Software"), to deal in the Software without
 *   restriction, including without limitation the rights to use, copy, modify, merge, publish,
 *   distribute, sublicense, and/or sell copies of the Software, and to permit persons to whom the
 *   Software is furnished to do so, subject to the following conditions: The above copyright
 *   notice and this permission notice shall be included in all copies or substantial portions of
 *   the Software. THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 *   IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A
 *   PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE
 *   LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR
 *   OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER
 *   DEALINGS IN THE SOFTWARE.
 */
import { Output, pastSkippable, PayloadError, tooLarge } from './payload-error.js';

const bad = (why: string) => new PayloadError('invalid', `zstd: ${why}`);

interface Fse {
  /** accuracy log */
  b: number;
  /** symbol per state */
  s: Uint8Array;
  /** bits per state */
  n: Uint8Array;
  /** next state baseline */
  t: Uint16Array;
}
interface Huf {
  /** bits per state */
  n: Uint8Array;
  /** max bits */
  b: number;
  /** symbol per state */
  s: Uint8Array;
}

const msb = (val: number): number => 31 - Math.clz32(val);

/** Reads an FSE table description at byte `bt` (RFC 8878 4.1.1); returns [next byte, table]. */
function rfse(dat: Uint8Array, bt: number, mal: number, bounded = true): [number, Fse] {
  let tpos = (bt << 3) + 4;
  const al = (dat[bt]! & 15) + 5;
  if (al > mal) throw bad(`FSE accuracy ${al} above ${mal}`);
  const sz = 1 << al;
  let probs = sz;
  let sym = -1;
  let ht = sz;
  const buf = new ArrayBuffer(512 + (sz << 2));
  const freq = new Int16Array(buf, 0, 256);
  const dstate = new Uint16Array(buf, 0, 256);
  const nstate = new Uint16Array(buf, 512, sz);
  const bb1 = 512 + (sz << 1);
  const syms = new Uint8Array(buf, bb1, sz);
  const nbits = new Uint8Array(buf, bb1 + sz);
  while (sym < 255 && probs > 0) {
    const bits = msb(probs + 1);
    const cbt = tpos >> 3;
    const msk = (1 << (bits + 1)) - 1;
    let val = ((dat[cbt]! | (dat[cbt + 1]! << 8) | (dat[cbt + 2]! << 16)) >> (tpos & 7)) & msk;
    const msk1fb = (1 << bits) - 1;
    const msv = msk - probs - 1;
    const sval = val & msk1fb;
    if (sval < msv) {
      tpos += bits;
      val = sval;
    } else {
      tpos += bits + 1;
      if (val > msk1fb) val -= msv;
    }
    freq[++sym] = --val;
    if (val === -1) {
      probs += val;
      syms[--ht] = sym;
    } else probs -= val;
    if (!val) {
      let re: number;
      do {
        const rbt = tpos >> 3;
        re = ((dat[rbt]! | (dat[rbt + 1]! << 8)) >> (tpos & 7)) & 3;
        tpos += 2;
        sym += re;
      } while (re === 3 && sym < 256);
    }
  }
  if (sym > 255 || probs) throw bad('FSE table description does not add up');
  if (bounded && tpos > dat.length << 3) throw bad('FSE table description passes the end of the block');
  let sympos = 0;
  const sstep = (sz >> 1) + (sz >> 3) + 3;
  const smask = sz - 1;
  for (let s = 0; s <= sym; ++s) {
    const sf = freq[s]!;
    if (sf < 1) {
      dstate[s] = -sf;
      continue;
    }
    for (let i = 0; i < sf; ++i) {
      syms[sympos] = s;
      do sympos = (sympos + sstep) & smask;
      while (sympos >= ht);
    }
  }
  if (sympos) throw bad('FSE symbols do not spread');
  for (let i = 0; i < sz; ++i) {
    const ns = dstate[syms[i]!]!++;
    const nb = (nbits[i] = al - msb(ns));
    nstate[i] = (ns << nb) - sz;
  }
  return [(tpos + 7) >> 3, { b: al, s: syms, n: nbits, t: nstate }];
}

/** Reads a Huffman tree description at byte `bt` (its header byte); returns [next byte, table]. RFC 8878 4.2.1. */
function rhu(dat: Uint8Array, bt: number): [number, Huf] {
  let wc = -1;
  const buf = new Uint8Array(292);
  const hb = dat[bt]!;
  const hw = buf.subarray(0, 256);
  const rc = buf.subarray(256, 268);
  const ri = new Uint16Array(buf.buffer, 268);
  if (hb < 128) {
    const [ebt, fdt] = rfse(dat, bt + 1, 6);
    bt += hb;
    if (bt >= dat.length) throw bad('Huffman weights pass the end of the block');
    const epos = ebt << 3;
    const lb = dat[bt]!;
    if (!lb) throw bad('Huffman weights end without their marker bit');
    let st1 = 0;
    let st2 = 0;
    let btr1 = fdt.b;
    let btr2 = btr1;
    let fpos = (++bt << 3) - 8 + msb(lb);
    for (;;) {
      fpos -= btr1;
      if (fpos < epos) break;
      let cbt = fpos >> 3;
      st1 += ((dat[cbt]! | (dat[cbt + 1]! << 8)) >> (fpos & 7)) & ((1 << btr1) - 1);
      hw[++wc] = fdt.s[st1]!;
      fpos -= btr2;
      if (fpos < epos) break;
      cbt = fpos >> 3;
      st2 += ((dat[cbt]! | (dat[cbt + 1]! << 8)) >> (fpos & 7)) & ((1 << btr2) - 1);
      hw[++wc] = fdt.s[st2]!;
      // States that read no bits never reach the stream's start: 255 weights at most.
      if (wc >= 254) throw bad('more than 255 Huffman weights');
      btr1 = fdt.n[st1]!;
      st1 = fdt.t[st1]!;
      btr2 = fdt.n[st2]!;
      st2 = fdt.t[st2]!;
    }
    if (++wc > 255) throw bad('more than 255 Huffman weights');
  } else {
    wc = hb - 127;
    if (bt + ((wc + 1) >> 1) >= dat.length) throw bad('Huffman weights pass the end of the block');
    for (let i = 0; i < wc; i += 2) {
      const byte = dat[++bt]!;
      hw[i] = byte >> 4;
      hw[i + 1] = byte & 15;
    }
    ++bt;
  }
  let wes = 0;
  for (let i = 0; i < wc; ++i) {
    const wt = hw[i]!;
    if (wt > 11) throw bad('Huffman weight above 11');
    wes += wt && 1 << (wt - 1);
  }
  if (wes === 0) throw bad('Huffman weights all zero');
  const mb = msb(wes) + 1;
  if (mb > 11) throw bad('Huffman codes longer than 11 bits');
  const ts = 1 << mb;
  const rem = ts - wes;
  if (rem & (rem - 1)) throw bad('Huffman weights do not add up to a power of 2');
  hw[wc++] = msb(rem) + 1;
  for (let i = 0; i < wc; ++i) {
    const wt = hw[i]!;
    ++rc[(hw[i] = wt && mb + 1 - wt)]!;
  }
  const hbuf = new Uint8Array(ts << 1);
  const syms = hbuf.subarray(0, ts);
  const nb = hbuf.subarray(ts);
  ri[mb] = 0;
  for (let i = mb; i > 0; --i) {
    const pv = ri[i]!;
    nb.fill(i, pv, (ri[i - 1] = pv + rc[i]! * (1 << (mb - i))));
  }
  if (ri[0] !== ts) throw bad('Huffman table does not fill');
  for (let i = 0; i < wc; ++i) {
    const bits = hw[i]!;
    if (bits) {
      const code = ri[bits]!;
      syms.fill(i, code, (ri[bits] = code + (1 << (mb - bits))));
    }
  }
  return [bt, { n: nb, b: mb, s: syms }];
}

/** One Huffman stream into `out`, which it must fill exactly. */
function dhu(dat: Uint8Array, out: Uint8Array, hu: Huf): void {
  const len = dat.length;
  const ss = out.length;
  const lb = dat[len - 1];
  const msk = (1 << hu.b) - 1;
  const eb = -hu.b;
  if (!lb) throw bad('Huffman stream ends without its marker bit');
  let st = 0;
  let btr = hu.b;
  let pos = (len << 3) - 8 + msb(lb) - btr;
  let i = -1;
  while (pos > eb && i < ss) {
    const cbt = pos >> 3;
    const val = (dat[cbt]! | (dat[cbt + 1]! << 8) | (dat[cbt + 2]! << 16)) >> (pos & 7);
    st = ((st << btr) | val) & msk;
    out[++i] = hu.s[st]!;
    pos -= btr = hu.n[st]!;
  }
  if (pos !== eb || i + 1 !== ss) throw bad('Huffman stream does not decode to its size');
}

function dhu4(dat: Uint8Array, out: Uint8Array, hu: Huf): void {
  if (dat.length < 10) throw bad('4-stream literals shorter than their jump table');
  let bt = 6;
  const ss = out.length;
  const sz1 = (ss + 3) >> 2;
  const sz2 = sz1 << 1;
  const sz3 = sz1 + sz2;
  const s1 = dat[0]! | (dat[1]! << 8);
  const s2 = dat[2]! | (dat[3]! << 8);
  const s3 = dat[4]! | (dat[5]! << 8);
  if (bt + s1 + s2 + s3 >= dat.length) throw bad('4-stream jump table passes the literals');
  dhu(dat.subarray(bt, (bt += s1)), out.subarray(0, sz1), hu);
  dhu(dat.subarray(bt, (bt += s2)), out.subarray(sz1, sz2), hu);
  dhu(dat.subarray(bt, (bt += s3)), out.subarray(sz2, sz3), hu);
  dhu(dat.subarray(bt), out.subarray(sz3), hu);
}

/** FSE tables of RFC 8878 3.1.1.3.2.2 (predefined distributions), as fzstd encodes them (trailing zero bits left off). */
const dllt = rfse(new Uint8Array([81, 16, 99, 140, 49, 198, 24, 99, 12, 33, 196, 24, 99, 102, 102, 134, 70, 146, 4]), 0, 6, false)[1];
const dmlt = rfse(new Uint8Array([33, 20, 196, 24, 99, 140, 33, 132, 16, 66, 8, 33, 132, 16, 66, 8, 33, 68, 68, 68, 68, 68, 68, 68, 68, 36, 9]), 0, 6, false)[1];
const doct = rfse(new Uint8Array([32, 132, 16, 66, 102, 70, 68, 68, 68, 68, 36, 73, 2]), 0, 5, false)[1];

const b2bl = (b: Uint8Array, s: number): Int32Array => {
  const bl = new Int32Array(b.length);
  for (let i = 0; i < b.length; ++i) {
    bl[i] = s;
    s += 1 << b[i]!;
  }
  return bl;
};
/** Literal length extra bits (codes 0-35) and baselines; match length (codes 0-52). */
const llb = new Uint8Array(new Int32Array([0, 0, 0, 0, 16843009, 50528770, 134678020, 202050057, 269422093]).buffer, 0, 36);
const llbl = b2bl(llb, 0);
const mlb = new Uint8Array(new Int32Array([0, 0, 0, 0, 0, 0, 0, 0, 16843009, 50528770, 117769220, 185207048, 252579084, 16]).buffer, 0, 53);
const mlbl = b2bl(mlb, 3);

interface Frame {
  /** offset history */
  o: [number, number, number];
  /** the previous block's sequence tables (Repeat_Mode) */
  t: [Fse, Fse, Fse] | null;
  /** the previous Huffman table (Treeless_Literals_Block) */
  h: Huf | null;
  /** first byte of this frame in the output */
  start: number;
  /** the frame's block maximum size */
  m: number;
}

/** The content of `blob`'s zstd frames (skippable ones skipped), at most `limit` bytes; throws PayloadError. */
export function unzstd(blob: Uint8Array, limit: number): Uint8Array {
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const out = new Output(limit, 'zstd output');
  let at = 0;
  while (at < blob.length) {
    if (at + 4 > blob.length) throw bad(`frame header cut at byte ${at}`);
    const magic = view.getUint32(at, true);
    const skipped = pastSkippable(view, at, bad);
    if (skipped >= 0) {
      at = skipped;
      continue;
    }
    if (magic !== 0xfd2fb528) throw bad(at === 0 ? `not a zstd frame (starts with ${hex(blob)})` : `bytes after a frame at byte ${at} are not a frame`);
    at = frame(blob, view, at + 4, out);
  }
  return out.bytes();
}

function frame(dat: Uint8Array, view: DataView, at: number, out: Output): number {
  if (at >= dat.length) throw bad('frame header cut');
  const fhd = dat[at++]!;
  const singleSegment = (fhd >> 5) & 1;
  const dictBytes = [0, 1, 2, 4][fhd & 3]!;
  const fcsFlag = fhd >> 6;
  const fcsBytes = fcsFlag === 0 ? singleSegment : 1 << fcsFlag;
  if (fhd & 8) throw bad('reserved bit set in the frame header');
  let window = 0;
  if (!singleSegment) {
    if (at >= dat.length) throw bad('frame header cut');
    const wd = dat[at++]!;
    const base = 2 ** (10 + (wd >> 3));
    window = base + (base / 8) * (wd & 7);
  }
  if (at + dictBytes + fcsBytes > dat.length) throw bad('frame header cut');
  let dict = 0;
  for (let i = 0; i < dictBytes; i++) dict += dat[at + i]! * 2 ** (8 * i);
  if (dict !== 0) throw bad(`the frame needs dictionary ${dict}`);
  at += dictBytes;
  let contentSize = -1;
  if (fcsBytes === 1) contentSize = dat[at]!;
  else if (fcsBytes === 2) contentSize = view.getUint16(at, true) + 256;
  else if (fcsBytes === 4) contentSize = view.getUint32(at, true);
  else if (fcsBytes === 8) contentSize = view.getUint32(at, true) + view.getUint32(at + 4, true) * 2 ** 32;
  at += fcsBytes;
  if (singleSegment) window = contentSize;
  if (window > out.limit || contentSize > out.limit - out.n) {
    throw tooLarge(`a zstd frame with a ${Math.max(window, contentSize)}-byte window or content`, out.limit);
  }
  const st: Frame = { o: [1, 4, 8], t: null, h: null, start: out.n, m: Math.min(window, 128 * 1024) };
  for (let last = 0; !last; ) {
    if (at + 3 > dat.length) throw bad(`block header cut at byte ${at}`);
    const bh = dat[at]! | (dat[at + 1]! << 8) | (dat[at + 2]! << 16);
    at += 3;
    last = bh & 1;
    const type = (bh >> 1) & 3;
    const size = bh >>> 3;
    if (type === 3) throw bad(`reserved block type at byte ${at - 3}`);
    if (size > st.m) throw bad(`a block of ${size} bytes is larger than the frame's block maximum (${st.m})`);
    if (type === 1) {
      if (at >= dat.length) throw bad('RLE block cut');
      out.room(size);
      out.buf.fill(dat[at]!, out.n, out.n + size);
      out.n += size;
      at += 1;
      continue;
    }
    if (at + size > dat.length) throw bad(`block passes the end of the data (${dat.length} bytes)`);
    if (type === 0) {
      out.room(size);
      out.buf.set(dat.subarray(at, at + size), out.n);
      out.n += size;
    } else compressed(dat.subarray(at, at + size), st, out);
    at += size;
  }
  if (fhd & 4) at += 4; // content checksum (xxhash64): not verified
  if (at > dat.length) throw bad('content checksum cut');
  if (contentSize >= 0 && out.n - st.start !== contentSize) throw bad(`the frame declares ${contentSize} bytes and holds ${out.n - st.start}`);
  return at;
}

/** A compressed block (RFC 8878 3.1.1.3): literals section, sequences section, executed into out. */
function compressed(dat: Uint8Array, st: Frame, out: Output): void {
  let bt = 0;
  const ebt = dat.length;
  if (ebt < 2) throw bad('compressed block too short');
  const b3 = dat[bt]!;
  const lbt = b3 & 3;
  const sf = (b3 >> 2) & 3;
  let lss = b3 >> 4;
  let lcs = 0;
  let s4 = 0;
  if (lbt < 2) {
    if (sf & 1) lss |= (dat[++bt]! << 4) | (sf & 2 && dat[++bt]! << 12);
    else lss = b3 >> 3;
  } else {
    s4 = sf;
    if (sf < 2) {
      lss |= (dat[++bt]! & 63) << 4;
      lcs = (dat[bt]! >> 6) | (dat[++bt]! << 2);
    } else if (sf === 2) {
      lss |= (dat[++bt]! << 4) | ((dat[++bt]! & 3) << 12);
      lcs = (dat[bt]! >> 2) | (dat[++bt]! << 6);
    } else {
      lss |= (dat[++bt]! << 4) | ((dat[++bt]! & 63) << 12);
      lcs = (dat[bt]! >> 6) | (dat[++bt]! << 2) | (dat[++bt]! << 10);
    }
  }
  ++bt;
  if (lss > st.m) throw bad(`literals of ${lss} bytes are larger than the block maximum (${st.m})`);
  const lit = new Uint8Array(lss);
  if (lbt === 0) {
    if (bt + lss > ebt) throw bad('raw literals pass the end of the block');
    lit.set(dat.subarray(bt, (bt += lss)));
  } else if (lbt === 1) {
    if (bt >= ebt) throw bad('RLE literals cut');
    lit.fill(dat[bt++]!);
  } else {
    let hu = st.h;
    if (lbt === 2) {
      const [next, table] = rhu(dat, bt);
      lcs -= next - bt;
      bt = next;
      st.h = hu = table;
    } else if (hu === null) throw bad('treeless literals without a previous Huffman table');
    if (lcs < 0 || bt + lcs > ebt) throw bad('compressed literals pass the end of the block');
    if (s4 === 0 && lss > 1023) throw bad('a single Huffman stream of more than 1023 literals');
    (s4 ? dhu4 : dhu)(dat.subarray(bt, (bt += lcs)), lit, hu!);
  }
  if (bt >= ebt) throw bad('sequences section missing');
  let ns = dat[bt++]!;
  const blockStart = out.n;
  let spl = 0;
  if (ns) {
    if (ns === 255) {
      ns = (dat[bt]! | (dat[bt + 1]! << 8)) + 0x7f00;
      bt += 2;
    } else if (ns > 127) ns = ((ns - 128) << 8) | dat[bt++]!;
    if (bt >= ebt) throw bad('sequence compression modes cut');
    const scm = dat[bt++]!;
    if (scm & 3) throw bad('reserved bits set in the sequence compression modes');
    const dts: [Fse, Fse, Fse] = [dmlt, doct, dllt];
    for (let i = 2; i > -1; --i) {
      const md = (scm >> ((i << 1) + 2)) & 3;
      if (md === 1) {
        if (bt >= ebt) throw bad('RLE sequence table cut');
        dts[i] = { s: new Uint8Array([dat[bt++]!]), n: new Uint8Array(1), t: new Uint16Array(1), b: 0 };
      } else if (md === 2) {
        [bt, dts[i]] = rfse(dat, bt, 9 - (i & 1));
      } else if (md === 3) {
        if (st.t === null) throw bad('repeated sequence table without a previous one');
        dts[i] = st.t[i];
      }
    }
    const [mlt, oct, llt] = (st.t = dts);
    if (bt >= ebt) throw bad('sequence bit stream missing');
    const lb = dat[ebt - 1]!;
    if (!lb) throw bad('sequence bit stream ends without its marker bit');
    const begin = bt << 3;
    let spos = (ebt << 3) - 8 + msb(lb) - llt.b;
    let cbt = spos >> 3;
    let lst = ((dat[cbt]! | (dat[cbt + 1]! << 8)) >> (spos & 7)) & ((1 << llt.b) - 1);
    cbt = (spos -= oct.b) >> 3;
    let ost = ((dat[cbt]! | (dat[cbt + 1]! << 8)) >> (spos & 7)) & ((1 << oct.b) - 1);
    cbt = (spos -= mlt.b) >> 3;
    let mst = ((dat[cbt]! | (dat[cbt + 1]! << 8)) >> (spos & 7)) & ((1 << mlt.b) - 1);
    const o = st.o;
    const blockEnd = blockStart + st.m;
    for (; ns > 0; --ns) {
      if (spos < begin) throw bad('sequence bit stream read past its start');
      const llc = llt.s[lst]!;
      const lbtr = llt.n[lst]!;
      const mlc = mlt.s[mst]!;
      const mbtr = mlt.n[mst]!;
      const ofc = oct.s[ost]!;
      const obtr = oct.n[ost]!;
      if (llc > 35 || mlc > 52 || ofc > 25) throw bad(`sequence code out of range (literal length ${llc}, match length ${mlc}, offset ${ofc})`);
      cbt = (spos -= ofc) >> 3;
      const ofp = 1 << ofc;
      let off = ofp + (((dat[cbt]! | (dat[cbt + 1]! << 8) | (dat[cbt + 2]! << 16) | (dat[cbt + 3]! << 24)) >>> (spos & 7)) & (ofp - 1));
      cbt = (spos -= mlb[mlc]!) >> 3;
      let ml = mlbl[mlc]! + (((dat[cbt]! | (dat[cbt + 1]! << 8) | (dat[cbt + 2]! << 16)) >> (spos & 7)) & ((1 << mlb[mlc]!) - 1));
      cbt = (spos -= llb[llc]!) >> 3;
      const ll = llbl[llc]! + (((dat[cbt]! | (dat[cbt + 1]! << 8) | (dat[cbt + 2]! << 16)) >> (spos & 7)) & ((1 << llb[llc]!) - 1));
      if (ns > 1) {
        // No state update after the last sequence (RFC 8878 3.1.1.3.2.1.1).
        cbt = (spos -= lbtr) >> 3;
        lst = llt.t[lst]! + (((dat[cbt]! | (dat[cbt + 1]! << 8)) >> (spos & 7)) & ((1 << lbtr) - 1));
        cbt = (spos -= mbtr) >> 3;
        mst = mlt.t[mst]! + (((dat[cbt]! | (dat[cbt + 1]! << 8)) >> (spos & 7)) & ((1 << mbtr) - 1));
        cbt = (spos -= obtr) >> 3;
        ost = oct.t[ost]! + (((dat[cbt]! | (dat[cbt + 1]! << 8)) >> (spos & 7)) & ((1 << obtr) - 1));
      }
      if (off > 3) {
        o[2] = o[1];
        o[1] = o[0];
        o[0] = off -= 3;
      } else {
        const idx = off - (ll !== 0 ? 1 : 0);
        if (idx) {
          off = idx === 3 ? o[0] - 1 : o[idx]!;
          if (idx > 1) o[2] = o[1];
          o[1] = o[0];
          o[0] = off;
        } else off = o[0];
      }
      // The work budget: a sequence copies nothing before its lengths are known to fit.
      if (spl + ll > lss) throw bad('a sequence takes more literals than the block holds');
      if (out.n + ll + ml > blockEnd) throw bad(`a block's sequences produce more than its maximum (${st.m} bytes)`);
      out.room(ll + ml);
      const buf = out.buf;
      buf.set(lit.subarray(spl, spl + ll), out.n);
      out.n += ll;
      spl += ll;
      if (off < 1 || off > out.n - st.start) throw bad(`match offset ${off} reaches before the frame's start`);
      out.match(off, ml);
    }
    if (spos !== begin) throw bad('sequence bit stream not consumed exactly');
  } else if (bt !== ebt) throw bad('bytes after a block without sequences');
  const rest = lss - spl;
  if (out.n + rest > blockStart + st.m) throw bad(`a block produces more than its maximum (${st.m} bytes)`);
  out.room(rest);
  out.buf.set(lit.subarray(spl), out.n);
  out.n += rest;
}

function hex(b: Uint8Array): string {
  return Array.from(b.subarray(0, 4), (x) => x.toString(16).padStart(2, '0')).join(' ');
}
