/**
 * Display width: how many terminal columns a string takes. A grapheme cluster (what a reader sees
 * as one character, from Intl.Segmenter) is two columns when it is an emoji (a code point with
 * Emoji_Presentation, a variation selector 16, a flag's regional indicators, so a ZWJ sequence is
 * one emoji of two) or starts with a Wide or Fullwidth code point (East Asian Width, generated in
 * east-asian-width.ts); none when it is only combining marks or format characters; one otherwise.
 * Colour codes (ESC [ ... m) take none. Printable ASCII, the common case, is counted by length.
 *
 * Everything here is one pass over its text: cutting or wrapping a 32 KB string is linear in it.
 */
import { WIDE_RANGES } from './east-asian-width.js';

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
// eslint-disable-next-line no-control-regex
const SGR = /\x1b\[[0-9;]*m/g;
const EMOJI = /\p{Emoji_Presentation}|\u{fe0f}|\p{Regional_Indicator}/u;
const ZERO = /^[\p{Mn}\p{Me}\p{Cf}\p{Cc}\u{1160}-\u{11ff}]+$/u;

let segmenter: Intl.Segmenter | undefined;
const CHUNK = 256;

/** True when the code point is Wide or Fullwidth (a binary search over WIDE_RANGES). */
export function isWide(cp: number): boolean {
  let lo = 0;
  let hi = WIDE_RANGES.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (cp < WIDE_RANGES[mid * 2]!) hi = mid - 1;
    else if (cp > WIDE_RANGES[mid * 2 + 1]!) lo = mid + 1;
    else return true;
  }
  return false;
}

/** The columns one grapheme cluster takes: 0, 1 or 2. */
export function clusterWidth(g: string): number {
  const cp = g.codePointAt(0)!;
  if (cp >= 0x20 && cp < 0x7f) return 1;
  if (EMOJI.test(g)) return 2;
  if (isWide(cp)) return 2;
  if (ZERO.test(g)) return 0;
  return 1;
}

/** The grapheme clusters of `s` (colour codes kept whole, as clusters of width 0). */
export function* clusters(s: string): Generator<string> {
  segmenter ??= new Intl.Segmenter('en', { granularity: 'grapheme' });
  const pieces = s.includes('\x1b') ? s.split(/(\x1b\[[0-9;]*m)/) : [s];
  for (const piece of pieces) {
    if (piece.startsWith('\x1b[') && piece.endsWith('m')) {
      yield piece;
      continue;
    }
    // In pieces of CHUNK code units: V8's segment iterator takes time in the string's length per
    // step (a 32 KB string: minutes). A piece's last cluster may go on in the next piece, so it is
    // segmented again with what follows.
    for (let at = 0; at < piece.length; ) {
      const end = Math.min(piece.length, at + CHUNK);
      let last = '';
      let taken = 0;
      for (const { segment } of segmenter.segment(piece.slice(at, end))) {
        if (last !== '') yield last;
        taken += last.length;
        last = segment;
      }
      if (end === piece.length || taken === 0) {
        yield last;
        at += taken + last.length;
      } else at += taken;
    }
  }
}

const widthOf = (g: string): number => (g.startsWith('\x1b[') && g.length > 2 && g.endsWith('m') ? 0 : clusterWidth(g));

/** The columns `s` takes on one line (colour codes not counted). */
export function displayWidth(s: string): number {
  if (PRINTABLE_ASCII.test(s)) return s.length;
  const plain = s.includes('\x1b') ? s.replace(SGR, '') : s;
  if (PRINTABLE_ASCII.test(plain)) return plain.length;
  let w = 0;
  for (const g of clusters(plain)) w += clusterWidth(g);
  return w;
}

/** `s` as clusters with their widths, for cutting and wrapping in one pass. */
export function measured(s: string): { parts: string[]; widths: number[] } {
  const parts: string[] = [];
  const widths: number[] = [];
  if (PRINTABLE_ASCII.test(s)) {
    for (let i = 0; i < s.length; i++) parts.push(s[i]!), widths.push(1);
    return { parts, widths };
  }
  for (const g of clusters(s)) parts.push(g), widths.push(widthOf(g));
  return { parts, widths };
}

/** The longest start of `s` at most `width` columns wide (whole clusters only). */
export function takeWidth(s: string, width: number): string {
  if (PRINTABLE_ASCII.test(s)) return s.slice(0, Math.max(0, width));
  let w = 0;
  let out = '';
  for (const g of clusters(s)) {
    const gw = widthOf(g);
    if (w + gw > width) break;
    w += gw;
    out += g;
  }
  return out;
}

/** The longest end of `s` at most `width` columns wide (whole clusters only). */
export function takeWidthEnd(s: string, width: number): string {
  if (PRINTABLE_ASCII.test(s)) return width <= 0 ? '' : s.slice(Math.max(0, s.length - width));
  const { parts, widths } = measured(s);
  let w = 0;
  let i = parts.length;
  while (i > 0 && w + widths[i - 1]! <= width) w += widths[--i]!;
  return parts.slice(i).join('');
}

/** `s` padded with spaces to `width` columns (at the end, or at the start when `right`). */
export function padWidth(s: string, width: number, right = false): string {
  const room = width - displayWidth(s);
  if (room <= 0) return s;
  return right ? ' '.repeat(room) + s : s + ' '.repeat(room);
}
