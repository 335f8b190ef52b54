/**
 * A real client over TLS: kafkajs 2 (`ssl`, its socketFactory making a Node `tls` socket whose
 * 'keylog' event writes the key log, as the README tells kafkajs users) to a Node TLS server that
 * terminates TLS and relays to librdkafka's mock cluster (a kcat process owns it). A relay in
 * front of the TLS server records the encrypted bytes per connection; the TLS server records the
 * plaintext it relays. kcid's requests from the TLS capture with the key log must be the requests
 * of the plaintext one, request by request. Skipped without kcat or openssl.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import net from 'node:net';
import tls from 'node:tls';
import { afterAll, describe, expect, it } from 'vitest';
import { tmpFile } from './builder/capture.js';
import { Scenario } from './builder/scenario.js';
import { runKcid, skipUnless } from './helpers.js';
import { captureOf, closedBoth, testCertificate, type Chunk } from './tls/record.js';

const hasKcat = await new Promise<boolean>((resolve) => {
  const p = spawn('kcat', ['-V'], { stdio: 'ignore' });
  p.on('error', () => resolve(false));
  p.on('close', (code) => resolve(code === 0));
});
const cert = testCertificate();

let host: ChildProcess | null = null;
afterAll(() => {
  host?.stdin?.end();
  host?.kill();
});

/** A kcat producer owning a one-broker mock cluster, idle with its stdin open; resolves to the broker's port. */
function mockCluster(): Promise<number> {
  return new Promise((resolve, reject) => {
    host = spawn('kcat', ['-b', '127.0.0.1:9', '-X', 'test.mock.num.brokers=1', '-X', 'client.id=kcid-host', '-P', '-t', 'kcid-tls'], { stdio: ['pipe', 'ignore', 'pipe'] });
    let log = '';
    host.stderr!.on('data', (d: Buffer) => {
      log += d.toString();
      const m = /Mock cluster enabled.*replaced with 127\.0\.0\.1:(\d+)/.exec(log);
      if (m !== null) resolve(Number(m[1]));
    });
    host.on('error', reject);
    setTimeout(() => reject(new Error(`no mock cluster: ${log}`)), 10_000).unref();
  });
}

async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as net.AddressInfo).port;
}

describe('kafkajs over TLS to the mock cluster', skipUnless(hasKcat && cert !== null, 'needs kcat (its mock cluster) and openssl on the PATH (.ci/run installs both)'), () => {
  it('the requests decrypted with the key log kafkajs wrote are those relayed in plaintext', async () => {
    const mockPort = await mockCluster();
    const plain: Chunk[][] = [];
    const encrypted: Chunk[][] = [];
    // Each connection through the terminator and the relay, done when both of its sockets have closed.
    const relayed: Promise<void>[] = [];
    // TLS terminator: decrypts, relays to the mock, records the plaintext of each connection.
    const terminator = tls.createServer({ ...cert!, minVersion: 'TLSv1.3' }, (socket) => {
      const chunks: Chunk[] = [];
      plain.push(chunks);
      const up = net.connect(mockPort, '127.0.0.1');
      relayed.push(closedBoth(socket, up));
      socket.on('data', (d: Buffer) => {
        chunks.push({ fromClient: true, bytes: Buffer.from(d) });
        up.write(d);
      });
      up.on('data', (d: Buffer) => {
        chunks.push({ fromClient: false, bytes: Buffer.from(d) });
        socket.write(d);
      });
      socket.on('end', () => up.end());
      up.on('end', () => socket.end());
      socket.on('error', () => up.destroy());
      up.on('error', () => socket.destroy());
    });
    const tlsPort = await listen(terminator);
    // The relay in front records what the wire carries.
    const relay = net.createServer((down) => {
      const chunks: Chunk[] = [];
      encrypted.push(chunks);
      const up = net.connect(tlsPort, '127.0.0.1');
      relayed.push(closedBoth(down, up));
      down.on('data', (d: Buffer) => {
        chunks.push({ fromClient: true, bytes: Buffer.from(d) });
        up.write(d);
      });
      up.on('data', (d: Buffer) => {
        chunks.push({ fromClient: false, bytes: Buffer.from(d) });
        down.write(d);
      });
      down.on('end', () => up.end());
      up.on('end', () => down.end());
      down.on('error', () => up.destroy());
      up.on('error', () => down.destroy());
    });
    const relayPort = await listen(relay);

    let keylog = '';
    const { Kafka, logLevel } = createRequire(import.meta.url)('kafkajs') as typeof import('kafkajs');
    process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
    const kafka = new Kafka({
      clientId: 'kcid-kafkajs-tls',
      brokers: [`127.0.0.1:${relayPort}`],
      ssl: { rejectUnauthorized: false, servername: 'broker1.kafka.test' },
      logLevel: logLevel.NOTHING,
      connectionTimeout: 5000,
      retry: { retries: 2 },
      // Every broker kafkajs is told of (the mock advertises its own plaintext port) is reached through the relay.
      socketFactory: ({ ssl, onConnect }) => {
        const socket = tls.connect({ host: '127.0.0.1', port: relayPort, servername: 'broker1.kafka.test', ...(ssl as tls.ConnectionOptions) }, onConnect);
        socket.on('keylog', (line) => (keylog += line.toString('latin1')));
        socket.setKeepAlive(true, 60_000);
        return socket;
      },
    });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: 'kcid-tls', messages: [{ key: 'k1', value: 'one' }, { key: 'k2', value: 'two' }, { key: 'k3', value: 'three' }] });
    await producer.disconnect();
    // Every relayed connection closed on both sides: its bytes are all recorded.
    await Promise.all(relayed);
    relay.close();
    terminator.close();

    const s = new Scenario();
    encrypted.forEach((chunks, i) => captureOf(chunks, { client: `10.9.0.1:${50001 + i}`, scenario: s }));
    const capture = s.file('kafkajs-tls.pcap');
    const p = new Scenario();
    plain.forEach((chunks, i) => captureOf(chunks, { client: `10.9.0.1:${50001 + i}`, scenario: p }));
    const plaintext = p.file('kafkajs-plain.pcap');
    const keys = tmpFile('kafkajs.keys', keylog);

    const rows = async (file: string, args: string[] = []): Promise<unknown[][]> => {
      const out = await runKcid(['requests', '--format', 'ndjson', ...args, file]);
      expect(out.stderr).toBe('');
      return out.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .map((r) => [r.client, r.apiName, r.apiVersion, r.correlationId, r.clientId, r.responseFrame !== null, r.errorCode]);
    };
    const expected = await rows(plaintext);
    expect(expected.map((r) => r[1])).toEqual(expect.arrayContaining(['ApiVersions', 'Metadata', 'Produce']));
    expect(await rows(capture, ['--tls-keylog', keys])).toEqual(expected);
    const analyzed = await runKcid(['analyze', '--format', 'json', '--tls-keylog', keys, capture]);
    const doc = JSON.parse(analyzed.stdout) as { connections: { tls: { version: string; decrypted: boolean; sni: string } }[]; findings: unknown[] };
    expect(doc.findings).toEqual([]);
    for (const c of doc.connections) expect(c.tls).toMatchObject({ version: 'TLS 1.3', sni: 'broker1.kafka.test', decrypted: true });
  }, 60_000);
});
