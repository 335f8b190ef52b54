/**
 * Kafka's message schemas are JSON with `//` comments (and, in principle, `/* *\/` ones). Comments are
 * removed outside strings only: a string such as "http://..." keeps its slashes. Line breaks inside
 * comments are kept, so a JSON.parse error still points at the right line.
 */
import { SchemaError } from './model.js';

export function stripComments(text: string): string {
  let out = '';
  let i = 0;
  let copied = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === 0x5c /* \ */) i += 2;
        else if (d === 0x22) break;
        else if (d === 0x0a) break; // JSON strings cannot span lines: JSON.parse reports it
        else i++;
      }
      i++;
      continue;
    }
    if (c === 0x2f /* / */ && i + 1 < n) {
      const d = text.charCodeAt(i + 1);
      if (d === 0x2f) {
        out += text.slice(copied, i);
        while (i < n && text.charCodeAt(i) !== 0x0a) i++;
        copied = i;
        continue;
      }
      if (d === 0x2a /* * */) {
        out += text.slice(copied, i);
        const close = text.indexOf('*/', i + 2);
        const stop = close < 0 ? n : close + 2;
        out += text.slice(i, stop).replace(/[^\n]/g, ' ');
        i = stop;
        copied = i;
        continue;
      }
    }
    i++;
  }
  return out + text.slice(copied);
}

/** Parses JSON with comments; a syntax error is a SchemaError naming `where`. */
export function parseJsonc(text: string, where: string): unknown {
  try {
    return JSON.parse(stripComments(text));
  } catch (e) {
    throw new SchemaError(`${where}: not valid JSON: ${(e as Error).message.split('\n')[0]}`);
  }
}
