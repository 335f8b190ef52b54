/**
 * `kcid show`'s outputs: the tree as text with a hex dump under each message (tshark -x's layout: 16
 * bytes a row, offsets in hex, ASCII on the right), and the same tree as JSON (keys in a fixed order:
 * path, offset, length, type, value, then hidden, hex, note and children when present).
 *
 * In the hex dump a `|` before a byte marks where a field starts; with --field only that field is
 * marked, `[` before its first byte and `]` after its last. Hidden bytes (secrets, and payloads
 * without --payload) are `**`, bytes the capture misses `..`.
 */
import { quoted, sanitize } from '../base/sanitize.js';
import { safeJson } from '../base/json-text.js';
import type { Protocol } from '../kafka/protocol.js';
import type { Located } from './locate.js';
import { endpointText } from './locate.js';
import type { MessageTree } from './message.js';
import type { ShowNode } from './walk.js';

export interface Shown {
  readonly at: Located;
  readonly tree: MessageTree;
}

export const SHOW_JSON_VERSION = 1;

function valueText(n: ShowNode): string {
  if (n.value === null) return 'null';
  if (typeof n.value === 'string') return n.type === 'string' && n.hidden === undefined ? quoted(n.value) : sanitize(n.value);
  return String(n.value);
}

function rangeText(n: ShowNode): string {
  return `[${n.offset}, ${n.offset + n.length})`;
}

function treeLines(n: ShowNode, depth: number, out: string[]): void {
  const label = n.path === '' ? n.type : n.path;
  const hex = n.hex === undefined ? '' : ` (hex ${n.hex})`;
  const note = n.note === undefined ? '' : `  -- ${sanitize(n.note)}`;
  const value = n.children !== undefined && n.value === null ? '' : ` ${valueText(n)}`;
  out.push(`${'  '.repeat(depth)}${rangeText(n).padEnd(14)} ${sanitize(label)}:${value}${hex} <${sanitize(n.type)}>${note}`);
  for (const k of n.children ?? []) treeLines(k, depth + 1, out);
}

/** Every node, depth first. */
function* nodes(n: ShowNode): Generator<ShowNode> {
  yield n;
  for (const k of n.children ?? []) yield* nodes(k);
}

export function findField(root: ShowNode, path: string): ShowNode | null {
  for (const n of nodes(root)) if (n.path === path) return n;
  return null;
}

/** The hex dump of a message: field starts marked (or only `field`'s bytes), secrets and gaps masked. */
export function hexDump(bytes: Uint8Array, root: ShowNode, gaps: Located['gaps'], field: ShowNode | null): string[] {
  const len = bytes.length;
  const marks = new Uint8Array(len + 1); // 1: a field starts; 2: --field starts; 3: --field ended
  const mask = new Uint8Array(len); // 1: hidden; 2: missing
  for (const n of nodes(root)) {
    if (field === null && n.children === undefined && n.offset < len) marks[n.offset] = 1;
    if (n.hidden !== undefined) for (let i = n.offset; i < Math.min(len, n.offset + n.length); i++) mask[i] = 1;
  }
  if (field !== null) {
    marks[field.offset] = 2;
    marks[Math.min(len, field.offset + field.length)] = 3;
  }
  for (const g of gaps) for (let i = g.from; i < Math.min(len, g.to); i++) mask[i] = 2;
  const sep = (i: number): string => (marks[i] === 2 ? '[' : marks[i] === 3 ? ']' : marks[i] === 1 ? '|' : ' ');
  const lines: string[] = [];
  for (let row = 0; row < len; row += 16) {
    let hex = '';
    let ascii = '';
    for (let i = row; i < row + 16; i++) {
      if (i === row + 8) hex += ' ';
      if (i >= len) {
        hex += i === len ? `${sep(i)}  ` : '   ';
        continue;
      }
      const b = bytes[i]!;
      const m = mask[i];
      hex += sep(i) + (m === 1 ? '**' : m === 2 ? '..' : b.toString(16).padStart(2, '0'));
      ascii += m === 1 ? '*' : m === 2 ? ' ' : b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.';
    }
    const tail = row + 16 === len ? sep(len) : ' ';
    lines.push(`${row.toString(16).padStart(4, '0')} ${hex}${tail} ${ascii}`);
  }
  return lines;
}

function framesText(at: Located): string {
  return at.pieces.map((p) => `${p.frame} [${p.from}, ${p.to})`).join(', ');
}

function title(s: Shown, p: Protocol): string {
  const t = s.tree;
  if (s.at.saslToken) return `${t.kind === 'request' ? 'Request' : 'Response'}: SASL token (after SaslHandshake v0), ${s.at.bytes.length} bytes`;
  const api = t.apiKey === null ? 'unknown API' : p.label(t.apiKey, t.apiVersion ?? -1);
  const who = t.clientId === null ? '' : `, client ${quoted(t.clientId)}`;
  const corr = t.correlationId === null ? '' : `, correlation id ${t.correlationId}`;
  return `${t.kind === 'request' ? 'Request' : 'Response'}: ${api}${corr}${who}, ${s.at.bytes.length} bytes`;
}

export interface TextOptions {
  readonly field: string | null;
}

export function renderText(input: string, frame: string, shown: readonly Shown[], notes: readonly string[], p: Protocol, o: TextOptions): string {
  const out: string[] = [];
  const n = shown.length;
  out.push(`Frame ${frame} of ${sanitize(input)}: ${n === 0 ? 'no Kafka message ends in it' : n === 1 ? '1 Kafka message ends in it' : `${n} Kafka messages end in it`}`);
  for (const note of notes) out.push(`  note: ${sanitize(note)}`);
  for (const s of shown) {
    out.push('');
    out.push(title(s, p));
    const dir = s.tree.kind === 'request' ? 'client to broker' : 'broker to client';
    out.push(`  connection ${s.at.connection}: ${endpointText(s.at.client)} -> ${endpointText(s.at.broker)} (${dir})`);
    if (s.at.tls) out.push(`  over TLS: offsets are in the decrypted stream; carried by the TLS records completed in frame${s.at.pieces.length === 1 ? '' : 's'} ${framesText(s.at)}`);
    else out.push(`  carried by frame${s.at.pieces.length === 1 ? '' : 's'} ${framesText(s.at)}`);
    if (s.at.gaps.length > 0) out.push(`  gaps (bytes the capture misses): ${s.at.gaps.map((g) => `[${g.from}, ${g.to})`).join(', ')}`);
    if (s.tree.error !== null) out.push(`  malformed at offset ${s.tree.error.offset}: ${sanitize(s.tree.error.message)}`);
    for (const pr of s.tree.headerProblems) out.push(`  header problem: ${sanitize(pr)}`);
    // Appended to `out` itself: spreading 200,000 tree lines or a large message's hex rows into push() overflows the stack.
    treeLines(s.tree.root, 1, out);
    let field: ShowNode | null = null;
    if (o.field !== null) {
      field = findField(s.tree.root, o.field);
      out.push(field === null ? `  --field ${quoted(o.field)}: no such field in this message` : `  --field ${quoted(o.field)}: ${rangeText(field)}`);
    }
    out.push('');
    for (const line of hexDump(s.at.bytes, s.tree.root, s.at.gaps, field)) out.push(line);
  }
  return `${out.join('\n')}\n`;
}

function nodeJson(n: ShowNode): Record<string, unknown> {
  const o: Record<string, unknown> = { path: n.path, offset: n.offset, length: n.length, type: n.type, value: n.value };
  if (n.hidden !== undefined) o['hidden'] = n.hidden;
  if (n.hex !== undefined) o['hex'] = n.hex;
  if (n.note !== undefined) o['note'] = n.note;
  if (n.children !== undefined) o['children'] = n.children.map(nodeJson);
  return o;
}

export function showJson(input: string, frame: string, shown: readonly Shown[], notes: readonly string[], p: Protocol): Record<string, unknown> {
  return {
    kcidShow: SHOW_JSON_VERSION,
    input,
    frame,
    notes,
    messages: shown.map((s) => ({
      kind: s.tree.kind,
      connection: { id: s.at.connection, client: endpointText(s.at.client), broker: endpointText(s.at.broker) },
      apiKey: s.tree.apiKey,
      apiName: s.tree.apiKey === null ? null : p.name(s.tree.apiKey),
      apiVersion: s.tree.apiVersion,
      correlationId: s.tree.correlationId,
      clientId: s.tree.clientId,
      length: s.at.bytes.length,
      tls: s.at.tls,
      frames: s.at.pieces.map((x) => ({ frame: x.frame, offset: x.from, length: x.to - x.from })),
      gaps: s.at.gaps.map((g) => ({ offset: g.from, length: g.to - g.from })),
      error: s.tree.error === null ? null : { offset: s.tree.error.offset, message: s.tree.error.message },
      headerProblems: s.tree.headerProblems,
      tree: nodeJson(s.tree.root),
    })),
  };
}

export function renderJson(input: string, frame: string, shown: readonly Shown[], notes: readonly string[], p: Protocol): string {
  return `${safeJson(showJson(input, frame, shown, notes, p), 2)}\n`;
}
