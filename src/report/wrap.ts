/** Text broken into lines at spaces, for tables and lists that must fit a terminal. */
import { displayWidth, measured, takeWidth, takeWidthEnd } from '../base/width.js';

const SEPARATORS = '-_.:/';

/**
 * `text` in lines of at most `width` columns (display width: a CJK character or an emoji takes
 * two, a combining mark none, and no cluster is cut), broken at spaces. A word wider than the
 * width is cut after a separator (- _ . : /) in its second half, else into pieces of the width (a
 * row must never be wider than the terminal); no line is empty unless the text is. One pass over
 * the text, whatever its length.
 */
export function wrap(text: string, width: number): string[] {
  const w = Math.max(1, Math.floor(width));
  const out: string[] = [];
  let line = '';
  let lineWidth = 0;
  for (let word of text.split(' ')) {
    let wordWidth = displayWidth(word);
    if (wordWidth > w) {
      if (line !== '') {
        out.push(line);
        line = '';
        lineWidth = 0;
      }
      const { parts, widths } = measured(word);
      let from = 0;
      while (wordWidth > w) {
        // As many clusters as fit (at least one: a two-column character in a one-column width).
        let to = from;
        let taken = 0;
        while (to < parts.length && taken + widths[to]! <= w) taken += widths[to++]!;
        if (to === from) taken = widths[to++]!;
        // Break after a separator (kcid-modern- / producer, 10.1.0.11: / 9092) when one is in reach.
        let at = to;
        let atWidth = taken;
        let jw = taken - widths[to - 1]!; // the width of parts[from, j)
        for (let j = to - 1; j > from && jw >= Math.ceil(w / 2); j--) {
          if (SEPARATORS.includes(parts[j - 1]!)) {
            at = j;
            atWidth = jw;
            break;
          }
          jw -= widths[j - 1]!;
        }
        out.push(parts.slice(from, at).join(''));
        from = at;
        wordWidth -= atWidth;
      }
      word = parts.slice(from).join('');
    }
    if (line !== '' && lineWidth + 1 + wordWidth > w) {
      out.push(line);
      line = word;
      lineWidth = wordWidth;
    } else {
      lineWidth = line === '' ? wordWidth : lineWidth + 1 + wordWidth;
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  out.push(line);
  return out;
}

/** `text` cut to `width` columns, the middle replaced by "…" (file names keep their start and end). */
export function cutMiddle(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  if (width <= 1) return takeWidth(text, Math.max(0, width));
  const head = Math.ceil((width - 1) / 2);
  return `${takeWidth(text, head)}…${takeWidthEnd(text, width - 1 - head)}`;
}
