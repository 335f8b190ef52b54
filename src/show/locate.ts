/**
 * Finds the Kafka messages that end in one frame of a capture, for `kcid show`: the capture is read
 * through the same stages as every command (capture/, net/, tcp/ reassembly), and each connection's
 * two byte streams are framed again here, keeping only the message being framed (its bytes, the frames
 * whose segments carried them, the gaps), so memory is one message per direction. Requests are
 * remembered by correlation id (a bounded map per connection) so that a response is walked by its
 * request's API and version; SASL tokens a connection sent are remembered so later quotes are hidden.
 */
import { readCapture } from '../capture/read.js';
import type { PacketRef } from '../capture/types.js';
import { decodeTcp } from '../net/decode.js';
import { newNetStats, newSegment } from '../net/types.js';
import { Reassembler } from '../tcp/reassembly.js';
import type { Direction, Endpoint, StreamHandler, TcpConnection } from '../tcp/types.js';
import type { Protocol } from '../kafka/protocol.js';
import { decodeRequestHeader } from '../kafka/headers.js';
import { tokensOf } from '../kafka/secrets.js';
import { SaslTokens } from '../kafka/sasl.js';
import { plausibleRequest as plausibleRequestBytes } from '../kafka/detect.js';
import { API_KEY } from '../kafka/schema/registry.js';
import type { RequestInfo } from './message.js';
import { TlsSession, type TlsSide } from '../tls/session.js';
import { KeyLog } from '../tls/keylog.js';
import { SECRETS_TLS_KEY_LOG } from '../capture/types.js';

/** A message larger than this is not shown (its size is still reported). */
export const MAX_SHOWN_BYTES = 64 * 1024 * 1024;
/** Requests remembered per connection, awaiting their response. */
const MAX_IN_FLIGHT = 4096;
/** Tokens remembered per connection. */
const MAX_TOKENS = 8;

export interface Piece {
  readonly frame: number;
  /** [from, to) in the message, from its first byte. */
  readonly from: number;
  readonly to: number;
}

export interface Located {
  readonly kind: 'request' | 'response';
  readonly frame: number;
  readonly connection: number;
  readonly client: Endpoint;
  readonly broker: Endpoint;
  /** The message, its size prefix first; bytes in gaps are zero. */
  readonly bytes: Uint8Array;
  /** The first byte missing from the capture (bytes.length when none is). */
  readonly avail: number;
  readonly pieces: readonly Piece[];
  readonly gaps: readonly { readonly from: number; readonly to: number }[];
  /** Over TLS: the offsets are in the decrypted stream, and `pieces` name the frames that completed each TLS record. */
  readonly tls: boolean;
  /** For a response: its request, when the capture holds it. */
  readonly request: RequestInfo | null;
  readonly tokens: readonly string[];
  /** A SASL token sent bare after a SaslHandshake v0 (KIP-43): no Kafka header, all of it a secret. */
  readonly saslToken: boolean;
}

export interface LocateResult {
  readonly messages: Located[];
  /** Why the frame's connection shows nothing, when it does not (TLS, lost framing, too large). */
  readonly notes: string[];
  readonly packets: number;
  /** The most bytes of messages in progress held at once. */
  readonly peakBytes: number;
}

const i32 = (b: Uint8Array, p: number): number => (b[p]! << 24) | (b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!;

class Conn {
  readonly inFlight = new Map<number, RequestInfo>();
  tokens: string[] = [];
  /** KIP-43's headerless token exchange after a SaslHandshake v0, followed as kafka/ follows it. */
  readonly sasl = new SaslTokens();
  /** Why a direction stopped being framed. */
  readonly lost: string[] = [];
  /** A segment of the frame asked for was this connection's. */
  touched = false;
  /** A TLS connection: its session, and the direction the ClientHello came from. */
  tls: TlsSession | null = null;
  tlsClientDir: Direction = 0;
  seenData = false;
  requestDir: Direction = 0;
  decided = false;
  constructor(readonly tcp: TcpConnection) {}
}

/** Bytes of messages in progress kept at most, over every connection (a capture may start many large messages). */
export const MAX_KEPT_BYTES = 256 * 1024 * 1024;

/** The bytes held by every message in progress. */
interface Budget {
  used: number;
  peak: number;
}

class Half {
  private size = new Uint8Array(4);
  private have = 0;
  /** The message's length (its size prefix included), or -1 between messages. */
  private msgLen = -1;
  /** Its bytes so far, grown as they come (never allocated from the size prefix alone); null: over budget, not kept. */
  private store: Uint8Array | null = null;
  private pieces: Piece[] = [];
  private gaps: { from: number; to: number }[] = [];
  private avail = -1;
  /** Lost its framing (a gap between messages, a bad size, TLS): nothing more is framed. */
  lost: string | null = null;

  constructor(
    readonly dir: Direction,
    private readonly done: (dir: Direction, bytes: Uint8Array | null, avail: number, pieces: Piece[], gaps: { from: number; to: number }[], frame: number) => void,
    private readonly budget: Budget,
  ) {}

  /** Room for `n` bytes of the message (zeros where the capture has none), within the budget. */
  private room(n: number): void {
    const s = this.store;
    if (s === null || s.length >= n) return;
    const size = Math.min(this.msgLen, Math.max(n, s.length * 2, 4096));
    if (this.budget.used + size - s.length > MAX_KEPT_BYTES) {
      this.budget.used -= s.length;
      this.store = null;
      return;
    }
    const grown = new Uint8Array(size);
    grown.set(s);
    this.budget.used += size - s.length;
    this.budget.peak = Math.max(this.budget.peak, this.budget.used);
    this.store = grown;
  }

  data(buf: Buffer, off: number, len: number, frame: number, lostAt: (why: string) => void): void {
    let p = off;
    const end = off + len;
    while (p < end && this.lost === null) {
      if (this.msgLen < 0) {
        const n = Math.min(4 - this.have, end - p);
        this.size.set(buf.subarray(p, p + n), this.have);
        this.pieces.push({ frame, from: this.have, to: this.have + n });
        this.have += n;
        p += n;
        if (this.have < 4) return;
        const size = i32(this.size, 0);
        if (size < 0 || size + 4 > MAX_SHOWN_BYTES) {
          this.lost = `a size prefix of ${size} (frame ${frame}): not a Kafka message kcid show can frame (at most ${MAX_SHOWN_BYTES} bytes)`;
          lostAt(this.lost);
          return;
        }
        this.msgLen = size + 4;
        this.store = new Uint8Array(4);
        this.budget.used += 4;
        this.store.set(this.size, 0);
        this.avail = -1;
        if (size === 0) this.finish(frame);
        continue;
      }
      const n = Math.min(this.msgLen - this.have, end - p);
      this.room(this.have + n);
      this.store?.set(buf.subarray(p, p + n), this.have);
      const last = this.pieces[this.pieces.length - 1];
      if (last !== undefined && last.frame === frame && last.to === this.have) this.pieces[this.pieces.length - 1] = { frame, from: last.from, to: this.have + n };
      else this.pieces.push({ frame, from: this.have, to: this.have + n });
      this.have += n;
      p += n;
      if (this.have === this.msgLen) this.finish(frame);
    }
  }

  gap(bytes: number, frame: number, lostAt: (why: string) => void): void {
    if (this.lost !== null) return;
    if (this.msgLen < 0) {
      this.lost = `${bytes} bytes missing from the capture before frame ${frame}, between messages: the messages after them cannot be framed`;
      lostAt(this.lost);
      return;
    }
    const n = Math.min(this.msgLen - this.have, bytes);
    this.gaps.push({ from: this.have, to: this.have + n });
    if (this.avail < 0) this.avail = this.have;
    this.have += n;
    if (this.have === this.msgLen) this.finish(frame);
    if (n < bytes) {
      this.lost = `${bytes - n} bytes missing from the capture before frame ${frame}, between messages: the messages after them cannot be framed`;
      lostAt(this.lost);
    }
  }

  /** The connection ended: a message still in progress will not end (its bytes are let go). */
  release(): void {
    if (this.store !== null) this.budget.used -= this.store.length;
    this.store = null;
    this.msgLen = -1;
    this.lost ??= 'the connection ended';
  }

  private finish(frame: number): void {
    this.room(this.msgLen);
    const msg = this.store;
    const lastFrame = this.pieces.length > 0 ? this.pieces[this.pieces.length - 1]!.frame : frame;
    this.done(this.dir, msg, this.avail < 0 ? this.msgLen : this.avail, this.pieces, this.gaps, this.gaps.length > 0 && this.gaps[this.gaps.length - 1]!.to === this.msgLen ? frame : lastFrame);
    if (msg !== null) this.budget.used -= msg.length;
    this.store = null;
    this.msgLen = -1;
    this.have = 0;
    this.pieces = [];
    this.gaps = [];
    this.avail = -1;
  }
}

/** Every message of the capture whose last byte is in `frame` (null: every message of the capture). */
export async function locate(file: string, frame: number | null, p: Protocol, kafkaPorts: ReadonlySet<number>, keys: KeyLog = new KeyLog()): Promise<LocateResult> {
  const messages: Located[] = [];
  const notes: string[] = [];
  let packets = 0;
  let frameSeen = false;
  const conns: Conn[] = [];
  const budget: Budget = { used: 0, peak: 0 };
  const reassembler = new Reassembler(
    {
      open(tcp: TcpConnection): StreamHandler {
        const conn = new Conn(tcp);
        const lostAt = (dir: Direction) => (why: string) => {
          conn.lost.push(`connection ${tcp.id} (${ep(tcp.a)} -> ${ep(tcp.b)}), ${dir === 0 ? 'A to B' : 'B to A'}: ${why}`);
        };
        const done = (dir: Direction, bytes: Uint8Array | null, avail: number, pieces: Piece[], gaps: { from: number; to: number }[], last: number): void => {
          if (bytes === null) {
            if (frame === null || last === frame) conn.lost.push(`connection ${tcp.id}: a message of ${pieces.length > 0 ? pieces[pieces.length - 1]!.to : 0}+ bytes ending in frame ${last} is not shown: the messages in progress hold more than ${MAX_KEPT_BYTES} bytes`);
            return;
          }
          if (!conn.decided) {
            conn.decided = true;
            // The side that sends a request the schemas define is the client (tcp/ guessed from ports and SYN).
            if (!plausibleRequest(bytes, p) && dir === 0) conn.requestDir = 1;
            else if (plausibleRequest(bytes, p)) conn.requestDir = dir;
          }
          const kind = dir === conn.requestDir ? 'request' : 'response';
          let request: RequestInfo | null = null;
          let saslToken = false;
          if (kind === 'request' && conn.sasl.clientActive) {
            const buf = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(avail, bytes.length));
            saslToken = conn.sasl.clientFrameIsToken(() => plausibleRequestBytes(buf, 0, buf.length, true, MAX_SHOWN_BYTES), avail >= 12 ? i32(bytes, 8) : -1);
            if (saslToken && avail === bytes.length && bytes.length > 4) conn.tokens = [...tokensOf(bytes.subarray(4)), ...conn.tokens].slice(0, MAX_TOKENS);
          } else if (kind === 'response' && conn.sasl.serverActive) {
            saslToken = conn.sasl.serverFrameIsToken(bytes.length - 4);
          }
          if (saslToken) {
            if (frame !== null && last !== frame) return;
            const client = conn.requestDir === 0 ? tcp.a : tcp.b;
            const broker = conn.requestDir === 0 ? tcp.b : tcp.a;
            messages.push({ kind, frame: last, connection: tcp.id, client, broker, bytes, avail, pieces, gaps, tls: conn.tls !== null, request: null, tokens: [], saslToken });
            return;
          }
          if (kind === 'request') {
            if (avail >= 12) {
              try {
                const h = decodeRequestHeader(bytes, 4, avail, avail === bytes.length, { protocol: p });
                const info: RequestInfo = { apiKey: h.apiKey, apiVersion: h.apiVersion, clientId: h.clientId };
                if (conn.inFlight.size >= MAX_IN_FLIGHT) conn.inFlight.delete(conn.inFlight.keys().next().value!);
                conn.inFlight.set(h.correlationId, info);
                if (frame === null || last === frame) request = info;
                if (h.apiKey === API_KEY.SaslAuthenticate && h.headerVersion !== null && avail === bytes.length) rememberToken(conn, bytes, 4 + h.headerLength, h.apiVersion);
                if (h.apiKey === API_KEY.SaslHandshake && h.headerVersion !== null) conn.sasl.request(h.apiKey, h.correlationId, mechanismOf(bytes, 4 + h.headerLength, avail));
              } catch {
                // A header that does not parse: the tree shows why.
              }
            }
          } else if (avail >= 8) {
            const corr = i32(bytes, 4);
            request = conn.inFlight.get(corr) ?? null;
            conn.inFlight.delete(corr);
            // SaslHandshake's responses use header v0: the ErrorCode follows the correlation id.
            if (request !== null && !conn.sasl.active) conn.sasl.response(request.apiKey, request.apiVersion, avail >= 10 ? (((bytes[8]! << 24) | (bytes[9]! << 16)) >> 16) : null);
          }
          if (frame !== null && last !== frame) return;
          const client = conn.requestDir === 0 ? tcp.a : tcp.b;
          const broker = conn.requestDir === 0 ? tcp.b : tcp.a;
          const tokens = kind === 'request' && request !== null && request.apiKey === API_KEY.SaslAuthenticate ? conn.tokens.slice(0, -1) : conn.tokens.slice();
          messages.push({ kind, frame: last, connection: tcp.id, client, broker, bytes, avail, pieces, gaps, tls: conn.tls !== null, request: kind === 'response' ? request : null, tokens, saslToken: false });
        };
        const halves = [new Half(0, done, budget), new Half(1, done, budget)] as const;
        conns.push(conn);
        // Over TLS, the session's plaintext is framed instead (side 0: the TLS client's bytes).
        const dirOf = (side: TlsSide): Direction => (side === 0 ? conn.tlsClientDir : ((1 - conn.tlsClientDir) as Direction));
        const startTls = (dir: Direction): void => {
          conn.tlsClientDir = dir;
          conn.tls = new TlsSession(
            {
              plaintext(side, b, o, n, f) {
                halves[dirOf(side)].data(b, o, n, f, lostAt(dirOf(side)));
              },
              plaintextGap(side, n, f) {
                halves[dirOf(side)].gap(n, f, lostAt(dirOf(side)));
              },
              note(_kind, side, f, message) {
                if (conn.lost.length < 8) conn.lost.push(`connection ${tcp.id} (${ep(tcp.a)} -> ${ep(tcp.b)}), TLS, ${side === 0 ? 'client' : 'broker'} side, frame ${f}: ${message}`);
              },
            },
            keys,
          );
        };
        return {
          data(dir, buf, off, len, f, tsSec, tsNsec) {
            if (f === frame) conn.touched = true;
            if (!conn.seenData) {
              conn.seenData = true;
              if (len >= 3 && buf[off] === 0x16 && buf[off + 1] === 0x03) startTls(dir);
            }
            if (conn.tls !== null) conn.tls.data(dir === conn.tlsClientDir ? 0 : 1, buf, off, len, f, tsSec, tsNsec);
            else halves[dir].data(buf, off, len, f, lostAt(dir));
          },
          gap(dir, bytes, f) {
            if (f === frame) conn.touched = true;
            if (conn.tls !== null) conn.tls.gap(dir === conn.tlsClientDir ? 0 : 1, bytes, f);
            else halves[dir].gap(bytes, f, lostAt(dir));
          },
          end() {
            conn.tls?.end();
            halves[0].release();
            halves[1].release();
          },
        };
      },
    },
    { kafkaPorts },
  );
  const net = newNetStats();
  const segment = newSegment();
  await readCapture(file, {
    onPacket(pk: PacketRef) {
      packets++;
      if (pk.frame === frame) frameSeen = true;
      if (decodeTcp(pk, segment, net)) reassembler.segment(segment);
    },
    onSecrets(type: number, data: Buffer) {
      if (type === SECRETS_TLS_KEY_LOG) keys.add("the capture's decryption secrets block", data.toString('latin1'));
    },
  });
  reassembler.finish();
  // What stopped framing on the connections the frame belongs to (others are not the user's question).
  for (const c of conns) if (c.touched) notes.push(...c.lost.slice(0, 4));
  return { messages, notes: frameSeen ? notes : [], packets, peakBytes: budget.peak };
}

function ep(e: Endpoint): string {
  return e.ip.includes(':') ? `[${e.ip}]:${e.port}` : `${e.ip}:${e.port}`;
}
export { ep as endpointText };

function plausibleRequest(bytes: Uint8Array, p: Protocol): boolean {
  if (bytes.length < 12) return false;
  const key = ((bytes[4]! << 24) | (bytes[5]! << 16)) >> 16;
  const version = ((bytes[6]! << 24) | (bytes[7]! << 16)) >> 16;
  return p.isDefined(key, version);
}

/** A SaslHandshake request's Mechanism (a string, not compact in v0 and v1). */
function mechanismOf(bytes: Uint8Array, at: number, avail: number): string | null {
  if (at + 2 > avail) return null;
  const n = ((bytes[at]! << 24) | (bytes[at + 1]! << 16)) >> 16;
  if (n < 0 || at + 2 + n > avail) return null;
  return Buffer.from(bytes.buffer, bytes.byteOffset + at + 2, n).toString('utf8');
}

/** A SaslAuthenticate request's AuthBytes (the first field of the body: bytes, compact from v2). */
function rememberToken(conn: Conn, bytes: Uint8Array, at: number, version: number): void {
  let n: number;
  let p = at;
  if (version >= 2) {
    let v = 0;
    let shift = 0;
    for (;;) {
      if (p >= bytes.length || shift > 28) return;
      const b = bytes[p++]!;
      v |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) break;
      shift += 7;
    }
    n = (v >>> 0) - 1;
  } else {
    if (p + 4 > bytes.length) return;
    n = i32(bytes, p);
    p += 4;
  }
  if (n <= 0 || p + n > bytes.length) return;
  conn.tokens = [...tokensOf(bytes.subarray(p, p + n)), ...conn.tokens].slice(0, MAX_TOKENS);
}
