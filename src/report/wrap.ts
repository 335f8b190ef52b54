/** Text broken into lines at spaces, for tables and lists that must fit a terminal. */

/**
 * `text` in lines of at most `width` characters, broken at spaces. A word longer than the width
 * is cut after a separator (- _ . : /) in its second half, else into pieces of the width (a row must never be wider than the terminal); no line is empty
 * unless the text is.
 */
export function wrap(text: string, width: number): string[] {
  const w = Math.max(1, Math.floor(width));
  const out: string[] = [];
  let line = '';
  for (let word of text.split(' ')) {
    while (word.length > w) {
      if (line !== '') {
        out.push(line);
        line = '';
      }
      // Break after a separator (kcid-modern- / producer, 10.1.0.11: / 9092) when one is in reach.
      let at = w;
      for (let i = w - 1; i >= Math.ceil(w / 2); i--) {
        if ('-_.:/'.includes(word[i - 1]!)) {
          at = i;
          break;
        }
      }
      out.push(word.slice(0, at));
      word = word.slice(at);
    }
    if (line !== '' && line.length + 1 + word.length > w) {
      out.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  out.push(line);
  return out;
}

/** `text` cut to `width` characters, the middle replaced by "…" (file names keep their start and end). */
export function cutMiddle(text: string, width: number): string {
  if (text.length <= width) return text;
  if (width <= 1) return text.slice(0, Math.max(0, width));
  const head = Math.ceil((width - 1) / 2);
  return `${text.slice(0, head)}…${text.slice(text.length - (width - 1 - head))}`;
}
