/**
 * One Kafka message's tree for `kcid show`: the size prefix, the header (every field, each tagged
 * field with its tag and size), the body by its schema, and then whatever is left: bytes after the
 * body (Kafka ignores them), or, for a malformed message, one node from where the walk broke to the
 * end, with the interpreter's words, so the finding and the tree say the same thing.
 *
 * Secrets are hidden here as in every output (kafka/secrets.ts): bytes fields by the walk, config
 * values by path, flag or name, and any string quoting a token the connection sent earlier.
 */
import { decodeRequestHeader } from '../kafka/headers.js';
import { toleratedShortBody } from '../kafka/bodies.js';
import type { Protocol } from '../kafka/protocol.js';
import { CONFIG_APIS, HIDDEN, isSensitiveConfig, maskQuotedSecrets } from '../kafka/secrets.js';
import type { FieldSchema } from '../kafka/schema/model.js';
import { API_KEY } from '../kafka/schema/registry.js';
import { Cursor, hexOf, walkMessage, WalkFail, type ShowNode, type WalkOptions } from './walk.js';

export interface MessageTree {
  readonly kind: 'request' | 'response';
  readonly apiKey: number | null;
  readonly apiVersion: number | null;
  readonly correlationId: number | null;
  readonly clientId: string | null;
  readonly root: ShowNode;
  /** Where and why the walk broke (null: the message parsed). */
  readonly error: { readonly offset: number; readonly problem: string; readonly message: string } | null;
  /** The header rules' problems, in their words (request headers). */
  readonly headerProblems: readonly string[];
}

export interface RequestInfo {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly clientId: string | null;
}

export interface BuildOptions extends WalkOptions {
  /** Tokens the connection sent before this message (SaslAuthenticate AuthBytes): hidden wherever quoted. */
  readonly tokens?: readonly string[];
}

const i16 = (b: Uint8Array, p: number): number => ((b[p]! << 24) | (b[p + 1]! << 16)) >> 16;
const i32 = (b: Uint8Array, p: number): number => (b[p]! << 24) | (b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!;

/**
 * The tree of the message in `bytes` (its size prefix first). `avail`: bytes [avail, length) are
 * missing from the capture (a gap) — the walk stops there. `request`: for a response, what its request said.
 */
export function messageTree(kind: 'request' | 'response', bytes: Uint8Array, avail: number, p: Protocol, request: RequestInfo | null, opts: BuildOptions = {}): MessageTree {
  const end = bytes.length;
  const root: ShowNode = { path: '', offset: 0, length: end, type: kind, value: null, children: [] };
  const kids = root.children!;
  const c = new Cursor(bytes, 0, Math.min(avail, end), end, 0, {
    ...opts,
    lenientTags: kind === 'request',
    tagProblem: (tag, name, size, f) => `tag ${tag} (${name}) has ${size} bytes, expected ${f.primitive === 'uuid' ? 16 : size}`,
  });
  let apiKey: number | null = null;
  let apiVersion: number | null = null;
  let correlationId: number | null = null;
  let clientId: string | null = null;
  let error: MessageTree['error'] = null;
  const headerProblems: string[] = [];
  let context = kind === 'request' ? 'request header' : 'response header';
  let stage = 'header';
  try {
    c.need(4, 0, 'size');
    c.pos = 4;
    c.leaf(kids, 'size', 0, 'int32', i32(bytes, 0), { note: `${i32(bytes, 0)} bytes follow` });
    c.limit = Math.min(end, 4 + Math.max(0, i32(bytes, 0)));
    if (kind === 'request') {
      c.need(8, 4, 'header');
      apiKey = i16(bytes, 4);
      apiVersion = i16(bytes, 6);
      correlationId = i32(bytes, 8);
      const hv = p.requestHeaderVersion(apiKey, apiVersion) ?? p.inferredRequestHeaderVersion(apiKey, apiVersion);
      if (hv === null) {
        const h = c.open(kids, 'header', 4, 'RequestHeader', null);
        for (const [name, at, n, v] of [
          ['RequestApiKey', 4, 2, apiKey],
          ['RequestApiVersion', 6, 2, apiVersion],
          ['CorrelationId', 8, 4, correlationId],
        ] as const) {
          c.pos = at + n;
          c.leaf(h.children!, `header.${name}`, at, n === 2 ? 'int16' : 'int32', v);
        }
        c.close(h);
        const problem = p.api(apiKey) === undefined ? `API key ${apiKey} is not one kcid's schemas define` : `${p.label(apiKey, apiVersion)} is not a version kcid's schemas define`;
        throw new WalkFail(problem, 12, 12, false, '');
      }
      context = `request header v${hv}`;
      const h = c.open(kids, 'header', 4, `RequestHeader v${hv}`, null);
      if (avail >= end) {
        const parsed = decodeRequestHeader(bytes, 4, end, true, { protocol: p });
        for (const pr of parsed.problems) headerProblems.push(pr.message);
        if (headerProblems.length > 0) h.note = headerProblems.join('; ');
      }
      walkMessage(c, p.schemas.requestHeader, hv, 'header', h.children!);
      c.close(h);
      const cid = h.children!.find((n) => n.path === 'header.ClientId');
      clientId = typeof cid?.value === 'string' ? cid.value : null;
      h.value = `${p.label(apiKey, apiVersion)}, correlation id ${correlationId}`;
    } else {
      c.need(4, 4, 'header');
      correlationId = i32(bytes, 4);
      if (request === null) {
        c.pos = 8;
        const h = c.open(kids, 'header', 4, 'ResponseHeader', null);
        c.pos = 4;
        c.pos = 8;
        c.leaf(h.children!, 'header.CorrelationId', 4, 'int32', correlationId);
        c.close(h);
        throw new WalkFail(`its request (correlation id ${correlationId}) is not in the capture before it: the API and version are unknown`, 8, 8, false, '');
      }
      apiKey = request.apiKey;
      apiVersion = request.apiVersion;
      clientId = request.clientId;
      const hv = p.responseHeaderVersion(apiKey, apiVersion);
      if (hv === null) throw new WalkFail(`${p.label(apiKey, apiVersion)} is not a version kcid's schemas define`, 4, 4, false, '');
      context = `response header v${hv}`;
      const h = c.open(kids, 'header', 4, `ResponseHeader v${hv}`, `${p.label(apiKey, apiVersion)}, correlation id ${correlationId}`);
      walkMessage(c, p.schemas.responseHeader, hv, 'header', h.children!);
      c.close(h);
    }
    stage = 'body';
    const api = p.api(apiKey)!;
    let version = apiVersion;
    const m = kind === 'request' ? api.request : api.response;
    context = `${api.name} v${version} ${kind}`;
    const bodyAt = c.pos;
    let b = c.open(kids, 'body', c.pos, `${m.name} v${version}`, null);
    try {
      walkMessage(c, m, version, '', b.children!);
    } catch (e) {
      // KIP-511, as Kafka's client reads it (ApiVersionsResponse.parse, and kcid's decoder): an ApiVersions
      // response is read as the version sent, and only when that fails as the lowest version; one that ends
      // just before ThrottleTimeMs stays a short body of the version sent (bodies.ts, toleratedShortBody).
      const lo = api.definedVersions.lo;
      if (!(e instanceof WalkFail) || e.gap || kind !== 'response' || apiKey !== API_KEY.ApiVersions || version === lo) throw e;
      if (toleratedShortBody(apiKey, version, { offset: c.pos, path: e.path }, c.limit) !== null) throw e;
      kids.splice(kids.indexOf(b), 1);
      c.pos = bodyAt;
      version = lo;
      context = `${api.name} v${version} ${kind}`;
      b = c.open(kids, 'body', c.pos, `${m.name} v${version}`, null);
      b.note = `the v${apiVersion} reading fails (${e.path === '' ? '' : `${e.path}: `}${e.problem}): read as v${version}, as Kafka's client does (KIP-511)`;
      walkMessage(c, m, version, '', b.children!);
    }
    c.close(b);
    if (c.pos < c.limit) {
      const at = c.pos;
      c.pos = c.limit;
      c.leaf(kids, 'trailing', at, 'raw', hexOf(bytes, at, c.limit, 32), { note: `${c.limit - at} bytes after the body (Kafka ignores them)` });
    }
  } catch (e) {
    if (!(e instanceof WalkFail)) throw e;
    settle(root, e.at);
    const path = e.path.replace(/^header\.?/, '');
    const message = stage === 'header' && e.path === '' ? e.problem : `${context}: ${path === '' ? '' : `${path}: `}${e.problem}`;
    error = { offset: e.offset, problem: e.problem, message };
    kids.push({ path: e.gap ? 'missing' : 'malformed', offset: e.at, length: end - e.at, type: 'raw', value: hexOf(bytes, e.at, Math.min(end, c.avail), 32), note: `${message} (at offset ${e.offset})` });
  }
  if (c.limit < end && error === null) kids.push({ path: 'beyond', offset: c.limit, length: end - c.limit, type: 'raw', value: null });
  hideSecrets(root, apiKey, kind, opts.tokens ?? []);
  // Raw bytes (after a break, after the body, an unknown tag) of a message that can carry a secret may hold it.
  if (apiKey !== null && carriesSecrets(p, apiKey, kind)) hideRaw(root, 0);
  nameErrors(root, p, 0);
  return { kind, apiKey, apiVersion, correlationId, clientId, root, error, headerProblems };
}

/**
 * A SASL token sent bare after a SaslHandshake v0 (KIP-43): its size prefix, then the token, all of
 * it a secret (a PLAIN token is authzid NUL user NUL password), shown as its length and masked.
 */
export function saslTokenTree(kind: 'request' | 'response', bytes: Uint8Array, avail: number): MessageTree {
  const end = bytes.length;
  const root: ShowNode = { path: '', offset: 0, length: end, type: kind, value: null, children: [] };
  let error: MessageTree['error'] = null;
  if (end < 4 || avail < 4) {
    const problem = 'the capture misses the size prefix';
    error = { offset: 0, problem, message: problem };
    root.children!.push({ path: 'missing', offset: 0, length: end, type: 'raw', value: null, note: problem });
  } else {
    const size = i32(bytes, 0);
    root.children!.push({ path: 'size', offset: 0, length: 4, type: 'int32', value: size, note: `${size} bytes follow` });
    const missing = avail < end ? `; the capture misses [${avail}, ${end})` : '';
    root.children!.push({ path: 'token', offset: 4, length: end - 4, type: 'bytes', value: `${end - 4} bytes`, hidden: 'secret', note: `SASL token after SaslHandshake v0 (KIP-43, no Kafka header), hidden (a secret)${missing}` });
  }
  return { kind, apiKey: null, apiVersion: null, correlationId: null, clientId: null, root, error, headerProblems: [] };
}

/** After a failed walk: open containers end where the walk broke, empty ones go. */
function settle(node: ShowNode, at: number): void {
  const kids = node.children;
  if (kids === undefined) return;
  for (let i = kids.length - 1; i >= 0; i--) {
    const k = kids[i]!;
    // A field that ends past the break cannot be (the walk appends a field once it is read): dropped for safety.
    if (k.length >= 0 && k.offset + k.length > at) {
      kids.splice(i, 1);
      continue;
    }
    if (k.length < 0) {
      settle(k, at);
      k.length = at - k.offset;
      if (k.length <= 0 && (k.children === undefined || k.children.length === 0)) kids.splice(i, 1);
      else k.note = k.note ?? 'cut short: the message is malformed here';
    }
  }
}

/** Config values by path, flag or name; strings quoting a token the connection sent or looking like one. */
function hideSecrets(root: ShowNode, apiKey: number | null, kind: 'request' | 'response', tokens: readonly string[]): void {
  const plain = (path: string): string => path.replace(/\[\d+\]/g, '');
  const visit = (n: ShowNode, parentSensitive: boolean, depth: number): void => {
    if (depth > 200 || n.children === undefined) return;
    const kids = n.children;
    const value = kids.find((k) => k.path.endsWith('.Value') || k.path === 'Value');
    let sensitive = false;
    if (apiKey !== null && value !== undefined && value.type === 'string') {
      const name = kids.find((k) => k.path.endsWith('.Name'))?.value;
      const flag = kids.find((k) => k.path.endsWith('.IsSensitive'))?.value;
      sensitive = isSensitiveConfig(apiKey, plain(value.path), typeof name === 'string' ? name : null, typeof flag === 'boolean' ? flag : null, parentSensitive);
      if (sensitive && value.value !== null) hide(value, HIDDEN);
    }
    for (const k of kids) {
      if (k.children !== undefined) {
        visit(k, sensitive || parentSensitive, depth + 1);
        // A tagged field's node repeats its value's: hidden with it.
        const v = k.type.startsWith('tag ') ? k.children.find((x) => x.path === `${k.path}.value` && x.hidden === 'secret') : undefined;
        if (v !== undefined && k.hidden === undefined) {
          k.value = v.value;
          k.hidden = v.hidden;
        }
      } else if (k.type === 'string' && typeof k.value === 'string' && k.hidden === undefined) {
        const quoted = kind === 'response' && apiKey === API_KEY.SaslAuthenticate && k.path === 'ErrorMessage';
        const masked = tokens.length > 0 || quoted ? maskQuotedSecrets(k.value, tokens) : k.value;
        if (masked !== k.value && (quoted || tokens.some((t) => k.value !== null && String(k.value).includes(t)))) hide(k, masked);
      }
    }
  };
  visit(root, false, 0);
}

/** Does this API's request or response have a field that can hold a secret (bytes, a config value, a quoted token)? */
function carriesSecrets(p: Protocol, apiKey: number, kind: 'request' | 'response'): boolean {
  const api = p.api(apiKey);
  if (api === undefined) return false;
  if (CONFIG_APIS.has(apiKey) || (kind === 'response' && apiKey === API_KEY.SaslAuthenticate)) return true;
  const m = kind === 'request' ? api.request : api.response;
  const seen = new Set<unknown>();
  const any = (fields: readonly FieldSchema[]): boolean =>
    fields.some((f) => f.isBytes || (f.struct !== null && !seen.has(f.struct) && (seen.add(f.struct), any(f.struct.fields))));
  return m.layouts.some((l) => any(l.fields));
}

function hideRaw(n: ShowNode, depth: number): void {
  if (depth > 200) return;
  for (const k of n.children ?? []) {
    if (k.children !== undefined) hideRaw(k, depth + 1);
    else if (k.type === 'raw' && k.hidden === undefined) {
      k.value = `${k.length} bytes`;
      k.hidden = 'secret';
      k.note = `${k.note === undefined ? '' : `${k.note}; `}not shown: this message can carry a secret`;
    }
  }
}

/** An ErrorCode's name beside its number ("NONE (0)", "UNSUPPORTED_VERSION (35)"). */
function nameErrors(n: ShowNode, p: Protocol, depth: number): void {
  if (depth > 200) return;
  if (n.children === undefined) {
    if (n.type === 'int16' && typeof n.value === 'number' && /(^|\.)ErrorCode$/.test(n.path) && n.note === undefined) n.note = p.errorLabel(n.value);
    return;
  }
  for (const k of n.children) nameErrors(k, p, depth + 1);
}

function hide(n: ShowNode, shown: string): void {
  n.value = shown;
  n.hidden = 'secret';
  n.note = `${n.length} bytes on the wire, hidden (a secret)`;
}
