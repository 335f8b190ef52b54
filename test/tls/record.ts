/**
 * Real TLS for tests: a Node TLS client talks to a Node TLS server (OpenSSL on both sides) through
 * a loopback TCP relay that records each chunk as it passes, and Node's 'keylog' event writes the
 * key log. The chunks, in the order the relay saw them, become a built capture (test/builder), so
 * the TLS bytes are OpenSSL's own while the packets around them stay explained.
 */
import net from 'node:net';
import tls from 'node:tls';
import { inject } from 'vitest';
import { makeCertificate, type CertificatePem } from './certificate.js';
import { minimalResponseBody, requestFrame, responseFrame, type RequestFrameOptions } from '../builder/kafka.js';
import { Scenario } from '../builder/scenario.js';
import { protocol } from '../../src/kafka/protocol.js';

export interface Chunk {
  fromClient: boolean;
  bytes: Buffer;
}

export interface TlsRecording {
  chunks: Chunk[];
  /** The client's key log lines (NSS format). */
  keylog: string;
  /** The plaintext the client sent, and the server's, in order: the same conversation without TLS. */
  plaintext: Chunk[];
}

let cert: { key: Buffer; cert: Buffer } | null = null;

/**
 * A self-signed RSA certificate for broker1.kafka.test (null without openssl): made once per
 * `npm test` by test/global-setup.ts and shared with every file; made here when run without it.
 */
export function testCertificate(): { key: Buffer; cert: Buffer } | null {
  if (cert !== null) return cert;
  let pem: CertificatePem | null | undefined;
  try {
    pem = inject('testCertificate');
  } catch {
    pem = undefined;
  }
  if (pem === undefined) pem = makeCertificate();
  if (pem === null) return null;
  cert = { key: Buffer.from(pem.key), cert: Buffer.from(pem.cert) };
  return cert;
}

export interface RecordOptions {
  /** tls options for both sides: minVersion, maxVersion, ciphers. */
  versions: Pick<tls.SecureContextOptions, 'minVersion' | 'maxVersion' | 'ciphers'>;
  /** Requests the client sends, one at a time, each answered before the next. */
  requests: RequestFrameOptions[];
  /** Extra options for the client (session to resume, ALPN). */
  client?: Partial<tls.ConnectionOptions>;
  /** Extra options for the server (ecdhCurve, to force a HelloRetryRequest). */
  server?: Partial<tls.TlsOptions>;
  /** Connections made one after the other, each resuming the session of the one before (default 1). */
  connections?: number;
}

/** Splits a byte stream into Kafka frames as they complete. */
/** Resolves when both sockets of a relayed connection have closed: every byte between them has passed. */
export function closedBoth(a: net.Socket, b: net.Socket): Promise<void> {
  return new Promise((resolve) => {
    let open = 2;
    const closed = (): void => {
      if (--open === 0) resolve();
    };
    a.once('close', closed);
    b.once('close', closed);
  });
}

function framer(onFrame: (frame: Buffer) => void): (data: Buffer) => void {
  let buf = Buffer.alloc(0);
  return (data) => {
    buf = Buffer.concat([buf, data]);
    while (buf.length >= 4 && buf.length >= 4 + buf.readInt32BE(0)) {
      const size = buf.readInt32BE(0);
      onFrame(buf.subarray(0, 4 + size));
      buf = buf.subarray(4 + size);
    }
  };
}

/** The response the test server sends: the response header its API uses, and the smallest body its schema allows (error codes 0). */
export function responseTo(request: Buffer): Buffer {
  const apiKey = request.readInt16BE(4);
  const apiVersion = request.readInt16BE(6);
  const correlationId = request.readInt32BE(8);
  return Buffer.from(responseFrame({ correlationId, headerVersion: protocol().responseHeaderVersion(apiKey, apiVersion) ?? 0, body: minimalResponseBody(apiKey, apiVersion) }));
}

export async function recordTls(o: RecordOptions): Promise<TlsRecording> {
  return (await recordTlsConnections(o))[0]!;
}

/** Several connections to one server (so a later one can resume an earlier one's session), with one key log. */
export async function recordTlsConnections(o: RecordOptions): Promise<TlsRecording[]> {
  const c = testCertificate();
  if (c === null) throw new Error('openssl is needed to make a test certificate');
  let chunks: Chunk[] = [];
  let plaintext: Chunk[] = [];
  let keylog = '';
  const server = tls.createServer({ ...c, ...o.versions, ALPNProtocols: ['kafka'], ...o.server }, (socket) => {
    socket.on(
      'data',
      framer((frame) => {
        const response = responseTo(frame);
        plaintext.push({ fromClient: false, bytes: response });
        socket.write(response);
      }),
    );
    socket.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const serverPort = (server.address() as net.AddressInfo).port;
  // The relay's last connection, done when both of its sockets have closed.
  let relayed: Promise<void> = Promise.resolve();
  const relay = net.createServer((down) => {
    const up = net.connect(serverPort, '127.0.0.1');
    relayed = closedBoth(down, up);
    down.on('data', (d) => {
      chunks.push({ fromClient: true, bytes: Buffer.from(d) });
      up.write(d);
    });
    up.on('data', (d) => {
      chunks.push({ fromClient: false, bytes: Buffer.from(d) });
      down.write(d);
    });
    down.on('end', () => up.end());
    up.on('end', () => down.end());
    down.on('error', () => {});
    up.on('error', () => {});
  });
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
  const relayPort = (relay.address() as net.AddressInfo).port;
  let session: Buffer | undefined;
  const recordings: TlsRecording[] = [];
  for (let n = 0; n < (o.connections ?? 1); n++) {
    chunks = [];
    plaintext = [];
    session = await connectOnce(o, relayPort, session, plaintext, (line) => (keylog += line));
    // The relay has passed on (and recorded) every byte of this connection before the next starts.
    await relayed;
    recordings.push({ chunks, plaintext, keylog: '' });
  }
  relay.close();
  server.close();
  for (const r of recordings) r.keylog = keylog;
  return recordings;
}

async function connectOnce(o: RecordOptions, relayPort: number, previous: Buffer | undefined, plaintext: Chunk[], onKeylog: (line: string) => void): Promise<Buffer | undefined> {
  let session: Buffer | undefined;
  const client = tls.connect({
    port: relayPort,
    host: '127.0.0.1',
    servername: 'broker1.kafka.test',
    rejectUnauthorized: false,
    ALPNProtocols: ['kafka'],
    ...o.versions,
    ...(previous === undefined ? {} : { session: previous }),
    ...o.client,
  });
  client.on('keylog', (line) => onKeylog(line.toString('latin1')));
  client.on('session', (s) => (session = s));
  await new Promise<void>((resolve, reject) => {
    client.once('secureConnect', resolve);
    client.once('error', reject);
  });
  let answered: () => void = () => {};
  client.on('data', framer(() => answered()));
  for (const r of o.requests) {
    const frame = Buffer.from(requestFrame(r));
    plaintext.push({ fromClient: true, bytes: frame });
    const done = new Promise<void>((resolve) => (answered = resolve));
    client.write(frame);
    await done;
  }
  // TLS 1.3 tickets come right after the handshake, before any answer: with a request answered the
  // client has them; without one, it waits for the first (recordTlsConnections waits for the bytes).
  if (o.requests.length === 0 && session === undefined && client.getProtocol() === 'TLSv1.3') await new Promise((r) => client.once('session', r));
  await new Promise<void>((resolve) => {
    client.once('close', () => resolve());
    client.end();
  });
  return session;
}

/** The recording as a capture: one TCP connection (client 10.9.0.1, broker 10.9.0.2:9093 by default), each chunk sent as it came. */
export function captureOf(chunks: readonly Chunk[], o: { client?: string; broker?: string; mss?: number; scenario?: Scenario } = {}): Scenario {
  // Loopback chunks can be 64 KB; the capture cuts them into segments of the given MSS.
  const s = o.scenario ?? new Scenario();
  const conn = s.connect({ client: o.client ?? '10.9.0.1:50001', broker: o.broker ?? '10.9.0.2:9092', mss: o.mss ?? 1460 });
  for (const ch of chunks) (ch.fromClient ? conn.clientBytes(ch.bytes) : conn.serverBytes(ch.bytes));
  conn.close();
  return s;
}
