/**
 * Kafka's message schemas in their own JSON form ("raw"), before kcid resolves them into the model
 * (registry.ts). The generator (scripts/gen-protocol.mjs) and --kafka-specs both read files through
 * here, so the built-in module and a user's Kafka are read by the same code.
 *
 * kcid adds two keys of its own to a raw message when it merges two generations of schemas:
 * `removed` (the versions the newer generation dropped and the Kafka release that dropped them) and
 * `legacy` (the older generation's layout of those versions).
 */
import { parseJsonc } from './jsonc.js';
import { SchemaError, formatVersions, parseVersions, type VersionRange } from './model.js';

export interface RawField {
  name: string;
  type: string;
  versions: string;
  nullableVersions?: string;
  flexibleVersions?: string;
  taggedVersions?: string;
  tag?: number | string;
  default?: string | number | boolean;
  entityType?: string;
  ignorable?: boolean | string;
  mapKey?: boolean;
  zeroCopy?: boolean;
  fields?: RawField[];
  about?: string;
  [other: string]: unknown;
}

export interface RawStruct {
  name: string;
  versions: string;
  fields: RawField[];
  [other: string]: unknown;
}

export interface RawLegacy {
  validVersions: string;
  flexibleVersions: string;
  fields: RawField[];
  commonStructs?: RawStruct[];
}

export interface RawMessage {
  apiKey?: number;
  type: string;
  name: string;
  validVersions: string;
  flexibleVersions?: string;
  fields: RawField[];
  commonStructs?: RawStruct[];
  headerVersions?: Record<string, string>;
  latestVersionUnstable?: boolean;
  listeners?: string[];
  /** kcid: versions a newer Kafka removed, and the release that removed them. */
  removed?: { versions: string; release: string };
  /** kcid: the older generation's layout of the removed versions. */
  legacy?: RawLegacy;
  [other: string]: unknown;
}

/** A note in a schema's comments: "Versions 0-2 were removed in Apache Kafka 4.0". */
export interface RemovalNote {
  /** null: "This request was removed" (every version). */
  versions: VersionRange | null;
  release: string;
}

export interface RawFile {
  message: RawMessage;
  removalNotes: RemovalNote[];
}

const REMOVAL = /\b(?:Versions? (\d+)(?:-(\d+))?|This request) (?:was|were) (?:.*? but )?removed in Apache Kafka (\d+\.\d+)/g;

/** The removal notes in a schema file's `//` comments (read before the comments are stripped). */
export function removalNotes(text: string): RemovalNote[] {
  const notes: RemovalNote[] = [];
  for (const line of text.split('\n')) {
    const c = line.indexOf('//');
    if (c < 0) continue;
    for (const m of line.slice(c).matchAll(REMOVAL)) {
      const lo = m[1] === undefined ? null : Number(m[1]);
      notes.push({
        versions: lo === null ? null : { lo, hi: m[2] === undefined ? lo : Number(m[2]) },
        release: m[3]!,
      });
    }
  }
  return notes;
}

const MESSAGE_TYPES = new Set(['request', 'response', 'header']);

/**
 * Reads one schema file. Returns null for schemas that are not messages of the protocol (records,
 * coordinator "data" schemas); throws SchemaError for a file that is not a schema at all.
 */
export function readRawFile(where: string, text: string): RawFile | null {
  const json = parseJsonc(text, where);
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new SchemaError(`${where}: not a JSON object`);
  const m = json as RawMessage;
  if (typeof m.type !== 'string' || typeof m.name !== 'string') throw new SchemaError(`${where}: no "type" and "name"`);
  if (!MESSAGE_TYPES.has(m.type)) return null;
  if (typeof m.validVersions !== 'string') throw new SchemaError(`${where}: ${m.name} has no "validVersions"`);
  // A removed API keeps its file with "validVersions": "none" and no fields (LeaderAndIsr in Kafka 4).
  if (m.fields === undefined && m.validVersions === 'none') m.fields = [];
  if (!Array.isArray(m.fields)) throw new SchemaError(`${where}: ${m.name} has no "fields"`);
  if (m.type !== 'header' && !(Number.isInteger(m.apiKey) && m.apiKey! >= 0 && m.apiKey! <= 0x7fff)) {
    throw new SchemaError(`${where}: ${m.name} has no valid "apiKey"`);
  }
  return { message: m, removalNotes: removalNotes(text) };
}

/** A copy without the "about" texts (the generated module need not carry them). */
export function compactMessage(m: RawMessage): RawMessage {
  return JSON.parse(JSON.stringify(m, (k, v) => (k === 'about' ? undefined : v))) as RawMessage;
}

function intersects(a: VersionRange, b: VersionRange): boolean {
  return a.lo <= b.hi && b.lo <= a.hi;
}

/** The fields (and nested fields) of `fields` that exist in some version of `range`. */
function prune(fields: RawField[], range: VersionRange, where: string): RawField[] {
  const out: RawField[] = [];
  for (const f of fields) {
    const v = parseVersions(f.versions, `${where}.${f.name}`);
    if (v === null || !intersects(v, range)) continue;
    out.push(f.fields ? { ...f, fields: prune(f.fields, range, `${where}.${f.name}`) } : f);
  }
  return out;
}

/**
 * Merges two generations: every message of `newer`, and for versions `older` defines that `newer` no
 * longer accepts, `older`'s layout marked as removed in the release `newer`'s comments name. A removal
 * no comment dates is an error: kcid says when a version went away only when Kafka says it.
 */
export function mergeGenerations(newer: RawFile[], older: RawFile[]): RawMessage[] {
  // Matched by API key and type, not name: Kafka renames APIs (key 74, ListClientMetricsResources, is
  // ListConfigResources since Kafka 4.1).
  const id = (m: RawMessage): string => (m.type === 'header' ? m.name : `${m.type} ${m.apiKey}`);
  const olderById = new Map<string, RawMessage>();
  for (const f of older) olderById.set(id(f.message), f.message);
  const newerIds = new Set(newer.map((f) => id(f.message)));
  for (const [k, m] of olderById) {
    if (!newerIds.has(k)) throw new SchemaError(`${m.name} is in the older schemas only: no release says when it was removed`);
  }
  const notesByKey = new Map<string, RemovalNote[]>();
  for (const f of newer) {
    const k = f.message.type === 'header' ? f.message.name : `key ${f.message.apiKey}`;
    if (f.message.type !== 'response') notesByKey.set(k, f.removalNotes);
  }
  const out: RawMessage[] = [];
  for (const f of newer) {
    const m = f.message;
    const o = olderById.get(id(m));
    if (!o) {
      out.push(m);
      continue;
    }
    const nv = parseVersions(m.validVersions, m.name);
    const ov = parseVersions(o.validVersions, `${m.name} (older)`);
    if (ov === null || (nv !== null && ov.lo >= nv.lo)) {
      if (ov !== null && nv !== null && ov.hi > nv.hi) throw new SchemaError(`${m.name}: the newer schemas dropped versions above ${nv.hi}`);
      out.push(m);
      continue;
    }
    if (nv !== null && ov.hi > nv.hi) throw new SchemaError(`${m.name}: the newer schemas dropped versions above ${nv.hi}`);
    const removed: VersionRange = { lo: ov.lo, hi: nv === null ? ov.hi : Math.min(ov.hi, nv.lo - 1) };
    const notes = notesByKey.get(m.type === 'header' ? m.name : `key ${m.apiKey}`) ?? [];
    const note = notes.find((n) => n.versions === null || (n.versions.lo <= removed.lo && n.versions.hi >= removed.hi));
    if (!note) throw new SchemaError(`${m.name}: versions ${formatVersions(removed)} were removed, but no comment says in which release`);
    const legacy: RawLegacy = {
      validVersions: formatVersions(removed),
      flexibleVersions: o.flexibleVersions ?? 'none',
      fields: prune(o.fields, removed, o.name),
    };
    if (o.commonStructs) {
      legacy.commonStructs = o.commonStructs
        .filter((s) => {
          const v = parseVersions(s.versions, `${o.name}.${s.name}`);
          return v !== null && intersects(v, removed);
        })
        .map((s) => ({ ...s, fields: prune(s.fields, removed, `${o.name}.${s.name}`) }));
    }
    out.push({ ...m, removed: { versions: formatVersions(removed), release: note.release }, legacy });
  }
  return out;
}

/** Kafka's error table as TSV (code, name, message; a header line first). */
export function parseErrorsTsv(text: string, where: string): [number, string, string][] {
  const rows: [number, string, string][] = [];
  const lines = text.split('\n');
  if (!/^code\tname\tmessage\r?$/.test(lines[0] ?? '')) throw new SchemaError(`${where}: expected a "code<TAB>name<TAB>message" header line`);
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '');
    if (line === '') continue;
    const [code, name, ...message] = line.split('\t');
    if (!/^-?\d+$/.test(code ?? '') || !/^[A-Z][A-Z0-9_]*$/.test(name ?? '')) throw new SchemaError(`${where}:${i + 1}: bad error row`);
    rows.push([Number(code), name!, message.join('\t')]);
  }
  return rows;
}
