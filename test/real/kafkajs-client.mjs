#!/usr/bin/env node
// kafkajs 2.x (a pure JavaScript client, no librdkafka) against a running mock cluster, for recording
// fixtures (see record.sh, kind `kafkajs`).
//
//   KCID_BROKERS=127.0.0.1:A,127.0.0.1:B,127.0.0.1:C node test/real/kafkajs-client.mjs
//
// The brokers are those of a mock cluster some other long-running process owns (record.sh: an idle
// kcat producer with test.mock.num.brokers=3); kafkajs cannot make one. One process runs a producer
// (`kcid-kafkajs-producer`, acks -1) writing a few keyed, gzip-compressed messages with a header, then a consumer in a group (`kcid-kafkajs-consumer`) that reads them back from the
// beginning, commits and leaves the group. kafkajs is a devDependency of kcid.
//
// Prints to stdout: the library version, how many messages were produced and consumed. Client logs
// go to stderr. Exit status 0 when all messages came back, 1 when not, 2 on a setup error, 3 past the
// hard time limit.
import { createRequire } from 'node:module';

const TOPIC = process.env.KCID_TOPIC ?? 'kcid-fixture';
const GROUP = process.env.KCID_GROUP ?? 'kcid-kafkajs-group';
const MESSAGES = 3;
const CONSUME_TIMEOUT_MS = 15000;
const HARD_LIMIT_MS = 25000;

const hardLimit = setTimeout(() => {
  console.error('kafkajs-client: hard time limit reached, exiting');
  process.exit(3);
}, HARD_LIMIT_MS);
hardLimit.unref();

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1'; // the v2 partitioner notice
const require = createRequire(import.meta.url);
let kafkajs;
try {
  kafkajs = require('kafkajs');
} catch (err) {
  fail(`cannot load kafkajs (npm install in the repository): ${err.message}`);
}
const { Kafka, CompressionTypes, logLevel } = kafkajs;
const version = require('kafkajs/package.json').version;

const brokers = (process.env.KCID_BROKERS ?? '').split(',').filter((b) => b !== '');
if (brokers.length === 0) fail('set KCID_BROKERS to the mock cluster, e.g. 127.0.0.1:A,127.0.0.1:B');

function fail(message) {
  console.error(`kafkajs-client: ${message}`);
  process.exit(2);
}

const logCreator =
  () =>
  ({ namespace, level, label, log }) =>
    console.error(`[${label}] ${namespace}: ${log.message}`);

function kafka(clientId) {
  return new Kafka({
    clientId,
    brokers,
    logLevel: logLevel.WARN,
    logCreator,
    connectionTimeout: 3000,
    // The mock answers at once; fail fast instead of retrying for a minute.
    retry: { retries: 3, initialRetryTime: 100 },
  });
}

async function produce() {
  // Not idempotent: kafkajs sends InitProducerId to the controller that Metadata names, and
  // librdkafka 2.0.2's mock names controller 0, none of its brokers (1..3): "Broker 0 not found".
  const producer = kafka('kcid-kafkajs-producer').producer();
  await producer.connect();
  const messages = [];
  for (let i = 1; i <= MESSAGES; i++) {
    messages.push({ key: `k${i}`, value: `message ${i} of kcid `.repeat(8), headers: { origin: 'kcid-kafkajs' } });
  }
  const sent = await producer.send({ topic: TOPIC, messages, compression: CompressionTypes.GZIP, acks: -1 });
  await producer.disconnect();
  return sent.length > 0 ? MESSAGES : 0;
}

async function consume() {
  const consumer = kafka('kcid-kafkajs-consumer').consumer({ groupId: GROUP, heartbeatInterval: 1000 });
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  const got = [];
  await new Promise((resolve) => {
    const timer = setTimeout(resolve, CONSUME_TIMEOUT_MS);
    consumer.run({
      eachMessage: async ({ partition, message }) => {
        got.push({ partition, offset: message.offset, key: message.key?.toString() });
        if (got.length >= MESSAGES) {
          clearTimeout(timer);
          resolve();
        }
      },
    });
  });
  // disconnect() commits the resolved offsets and sends LeaveGroup.
  await consumer.disconnect();
  return got;
}

async function main() {
  console.log(`library: kafkajs ${version}`);
  const produced = await produce();
  console.log(`produced: ${produced}`);
  const got = await consume();
  console.log(`consumed: ${got.length}`);
  for (const m of got) console.log(`  ${m.partition}@${m.offset} ${m.key}`);
  if (got.length < MESSAGES) {
    console.error(`kafkajs-client: consumed ${got.length} of ${MESSAGES} messages`);
    process.exitCode = 1;
  }
}

main().catch((err) => {
  console.error(`kafkajs-client: ${err?.stack ?? err}`);
  process.exit(1);
});
