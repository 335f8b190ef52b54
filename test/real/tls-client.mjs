#!/usr/bin/env node
// kafkajs 2.x over real TLS, for recording fixtures (see record.sh, kind `tls`).
//
//   KCID_BROKERS=127.0.0.1:A,127.0.0.1:B,127.0.0.1:C KCID_CERT=cert.pem KCID_KEY=key.pem KCID_OUT=dir \
//     node test/real/tls-client.mjs [variant...]
//
// The brokers are those of a mock cluster another process owns (record.sh: an idle kcat producer with
// test.mock.num.brokers=3). For each variant (a TLS version and cipher suite, forced with the
// `ciphers`, `minVersion` and `maxVersion` options of both ends) this process starts one Node TLS
// server per mock broker on 127.0.0.1, each terminating TLS and relaying the plaintext to its broker
// over loopback, and runs a kafkajs producer (`ssl`, its socketFactory making the `tls.connect()`
// socket, sending to the TLS server of the broker kafkajs asked for) that sends two keyed messages and
// disconnects. Node's 'keylog' event on the client's sockets writes KCID_OUT/<variant>.keys (NSS key
// log format). A capture of lo then holds both legs of every connection: the TLS one (client to TLS
// server) and the plaintext one (TLS server to mock broker).
//
// Prints to stdout one line per variant:
//   variant NAME tls-ports P1,P2,P3 upstream-ports U1,U2 connections N
// (tls-ports: the TLS servers' ports; upstream-ports: the local ports of the relays' plaintext
// connections to the mock). Exit status 0 when every variant produced, 1 when not, 2 on a setup error.
import { createRequire } from 'node:module';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import net from 'node:net';
import tls from 'node:tls';

export const VARIANTS = [
  { name: 'tls13-aes128gcm', minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3', ciphers: 'TLS_AES_128_GCM_SHA256' },
  { name: 'tls13-aes256gcm', minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3', ciphers: 'TLS_AES_256_GCM_SHA384' },
  { name: 'tls13-chacha20', minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3', ciphers: 'TLS_CHACHA20_POLY1305_SHA256' },
  { name: 'tls12-ecdhe-aes128gcm', minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES128-GCM-SHA256' },
  { name: 'tls12-ecdhe-chacha20', minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-CHACHA20-POLY1305' },
  { name: 'tls12-ecdhe-aes128cbc-sha1', minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES128-SHA' },
  { name: 'tls12-ecdhe-aes128cbc-sha256', minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES128-SHA256' },
  { name: 'tls12-rsa-aes256gcm', minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2', ciphers: 'AES256-GCM-SHA384' },
];

const TOPIC = process.env.KCID_TOPIC ?? 'kcid-fixture';
const HARD_LIMIT_MS = 25000;

function fail(message) {
  console.error(`tls-client: ${message}`);
  process.exit(2);
}

const hardLimit = setTimeout(() => {
  console.error('tls-client: hard time limit reached, exiting');
  process.exit(3);
}, HARD_LIMIT_MS);
hardLimit.unref();

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const require = createRequire(import.meta.url);
let kafkajs;
try {
  kafkajs = require('kafkajs');
} catch (err) {
  fail(`cannot load kafkajs (npm install in the repository): ${err.message}`);
}
const { Kafka, logLevel } = kafkajs;

const brokers = (process.env.KCID_BROKERS ?? '').split(',').filter((b) => b !== '');
if (brokers.length === 0) fail('set KCID_BROKERS to the mock cluster, e.g. 127.0.0.1:A,127.0.0.1:B');
const out = process.env.KCID_OUT ?? fail('set KCID_OUT to the folder for the key logs');
let cert;
try {
  cert = { cert: readFileSync(process.env.KCID_CERT ?? ''), key: readFileSync(process.env.KCID_KEY ?? '') };
} catch (err) {
  fail(`set KCID_CERT and KCID_KEY to an RSA certificate and its key (PEM): ${err.message}`);
}
const wanted = process.argv.slice(2);
for (const w of wanted) if (!VARIANTS.some((v) => v.name === w)) fail(`unknown variant '${w}'`);

const mockPort = (b) => Number(b.slice(b.lastIndexOf(':') + 1));

/** One TLS server per mock broker, relaying plaintext to it; resolves to the servers and what they saw. */
async function terminators(variant) {
  const upstream = [];
  const servers = [];
  const tlsPort = new Map(); // mock port -> TLS server port
  for (const b of brokers) {
    const target = mockPort(b);
    const server = tls.createServer({ ...cert, minVersion: variant.minVersion, maxVersion: variant.maxVersion, ciphers: variant.ciphers }, (socket) => {
      const up = net.connect(target, '127.0.0.1', () => upstream.push(up.localPort));
      socket.pipe(up);
      up.pipe(socket);
      socket.on('error', () => up.destroy());
      up.on('error', () => socket.destroy());
    });
    server.on('tlsClientError', (err) => console.error(`tls-client: ${variant.name}: server: ${err.message}`));
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    tlsPort.set(target, server.address().port);
  }
  return { servers, upstream, tlsPort };
}

async function run(variant) {
  const keys = join(out, `${variant.name}.keys`);
  writeFileSync(keys, '', { mode: 0o600 });
  const { servers, upstream, tlsPort } = await terminators(variant);
  let connections = 0;
  const kafka = new Kafka({
    clientId: `kcid-tls-${variant.name}`,
    brokers: [brokers[0]],
    ssl: { rejectUnauthorized: false },
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ namespace, label, log }) =>
        console.error(`[${label}] ${variant.name} ${namespace}: ${log.message}`),
    connectionTimeout: 3000,
    retry: { retries: 3, initialRetryTime: 100 },
    // Each broker kafkajs asks for (the mock advertises its plaintext ports) is reached through its TLS server.
    socketFactory: ({ host, port, ssl, onConnect }) => {
      const to = tlsPort.get(port);
      if (to === undefined) throw new Error(`no TLS server for broker ${host}:${port}`);
      connections++;
      const socket = tls.connect(
        { ...ssl, host: '127.0.0.1', port: to, servername: `broker${[...tlsPort.keys()].indexOf(port) + 1}.kafka.test`, minVersion: variant.minVersion, maxVersion: variant.maxVersion, ciphers: variant.ciphers },
        onConnect,
      );
      socket.on('keylog', (line) => appendFileSync(keys, line));
      return socket;
    },
  });
  const producer = kafka.producer();
  await producer.connect();
  // One key: both messages go to one partition, so to one leader.
  const sent = await producer.send({
    topic: TOPIC,
    acks: -1,
    messages: [
      { key: 'k1', value: `message 1 of kcid over ${variant.name}` },
      { key: 'k1', value: `message 2 of kcid over ${variant.name}` },
    ],
  });
  await producer.disconnect();
  await new Promise((resolve) => setTimeout(resolve, 100));
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  if (sent.length === 0 || sent[0].errorCode !== 0) throw new Error(`${variant.name}: produce failed`);
  console.log(`variant ${variant.name} tls-ports ${[...tlsPort.values()].join(',')} upstream-ports ${upstream.join(',')} connections ${connections}`);
}

async function main() {
  for (const v of VARIANTS) if (wanted.length === 0 || wanted.includes(v.name)) await run(v);
}

main().catch((err) => {
  console.error(`tls-client: ${err?.stack ?? err}`);
  process.exit(1);
});
