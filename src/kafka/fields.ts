/**
 * Reading decoded fields (schema/interpreter.ts's Struct: keyed by the schema's field names) with the
 * type a rule expects. A field the version does not have, or that was not selected, is undefined; a
 * value of another type (a --kafka-specs schema that changed a field's type) reads as undefined too.
 */
import type { Struct, Value } from './schema/interpreter.js';

export type { Struct, Value };

export function has(s: Struct | null, name: string): boolean {
  return s !== null && s[name] !== undefined;
}

export function str(s: Struct | null, name: string): string | null | undefined {
  const v = s?.[name];
  return v === null || typeof v === 'string' ? v : undefined;
}

export function int(s: Struct | null, name: string): number | undefined {
  const v = s?.[name];
  return typeof v === 'number' ? v : undefined;
}

export function bool(s: Struct | null, name: string): boolean | undefined {
  const v = s?.[name];
  return typeof v === 'boolean' ? v : undefined;
}

export function uuid(s: Struct | null, name: string): Uint8Array | null | undefined {
  const v = s?.[name];
  return v === null || v instanceof Uint8Array ? v : undefined;
}

export function list(s: Struct | null, name: string): Value[] | null | undefined {
  const v = s?.[name];
  return v === null || Array.isArray(v) ? v : undefined;
}

export function struct(v: Value | undefined): Struct | null {
  return v !== null && v !== undefined && typeof v === 'object' && !(v instanceof Uint8Array) && !Array.isArray(v) ? (v as Struct) : null;
}

/** A bytes field's size (the interpreter never keeps a bytes field's content): null when null on the wire. */
export function bytesSize(s: Struct | null, name: string): number | null | undefined {
  const v = s?.[name];
  if (v === null) return null;
  return v !== undefined && typeof v === 'object' && 'size' in v && typeof v.size === 'number' ? v.size : undefined;
}
