#!/usr/bin/env node
// A modern Kafka client on librdkafka's mock cluster, for recording fixtures (see record.sh, kind `modern`).
//
//   CKJS_DIR=/path/with/node_modules node test/real/modern-client.mjs
//
// @confluentinc/kafka-javascript (bundling librdkafka 2.x) is resolved from $CKJS_DIR, else from the
// current directory; it is not a dependency of kcid. One process runs an idempotent producer writing a
// few keyed messages, then a KIP-848 consumer (`group.protocol=consumer`, ConsumerGroupHeartbeat) that
// reads them back, and exits within about 20 s. Both clients keep `enable.metrics.push` (KIP-714,
// default true since librdkafka 2.5), so each one asks the mock for GetTelemetrySubscriptions.
//
// The mock cluster (3 brokers on 127.0.0.1, random ports) comes from one of two places:
//   conf  the producer's `test.mock.num.brokers=3`; the consumer reaches it through its ports. This mock
//         requests no metrics, so clients never send PushTelemetry.
//   api   librdkafka's C mock API, called through koffi (an FFI package, resolved like the library) on
//         the very librdkafka.so the library loaded: rd_kafka_mock_cluster_new() on an idle handle, then
//         rd_kafka_mock_telemetry_set_requested_metrics() and _set_push_interval(), so that clients also
//         send PushTelemetry (periodic, then a terminating push on close).
// KCID_MOCK=conf|api chooses; the default is api when koffi resolves and librdkafka is a shared library of
// its own (CKJS_LINKING=dynamic), conf otherwise.
//
// Prints to stdout, one per line: `mock brokers: 127.0.0.1:A,127.0.0.1:B,127.0.0.1:C` (once the producer
// has connected), then a summary. Client logs and errors go to stderr. Exit status 0 when all messages
// came back, 1 when not, 2 on a setup error, 3 past the 20 s hard limit.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const TOPIC = process.env.KCID_TOPIC ?? 'kcid-modern';
const GROUP = process.env.KCID_GROUP ?? 'kcid-modern-group';
const MESSAGES = 3;
const LINGER_MS = Number(process.env.KCID_LINGER_MS ?? 2500); // consumer stays after reading everything
const PUSH_INTERVAL_MS = 1000; // api mode: the mock's PushIntervalMs
const REQUESTED_METRICS = ['org.apache.kafka.'];
const CONSUME_TIMEOUT_MS = 12000;
const HARD_LIMIT_MS = 20000;

const hardLimit = setTimeout(() => {
  console.error('modern-client: hard time limit reached, exiting');
  process.exit(3);
}, HARD_LIMIT_MS);
hardLimit.unref();

const from = createRequire(path.join(path.resolve(process.env.CKJS_DIR ?? process.cwd()), 'noop.js'));
const Kafka = load('@confluentinc/kafka-javascript');
const pkgVersion = load('@confluentinc/kafka-javascript/package.json').version;
const mode = process.env.KCID_MOCK ?? (resolvable('koffi') && fs.existsSync(librdkafkaPath()) ? 'api' : 'conf');
if (mode !== 'api' && mode !== 'conf') fail(`KCID_MOCK must be api or conf, not ${mode}`);

function load(name) {
  try {
    return from(name);
  } catch (err) {
    fail(`cannot load ${name} from ${process.env.CKJS_DIR ?? process.cwd()} (set CKJS_DIR): ${err.message}`);
  }
}

function resolvable(name) {
  try {
    from.resolve(name);
    return true;
  } catch {
    return false;
  }
}

function fail(message) {
  console.error(`modern-client: ${message}`);
  process.exit(2);
}

function logTo(client, name) {
  client.on('event.log', (l) => console.error(`[${name}] ${l.severity} ${l.fac} ${l.message}`));
  client.on('event.error', (e) => console.error(`[${name}] error ${e.message}`));
}

// --- the mock cluster ----------------------------------------------------------------------------------

// The librdkafka the binding loaded: build/deps/librdkafka.so.1 in a CKJS_LINKING=dynamic build (a static
// build links it into the addon, whose mock symbols are not reachable: use conf there).
function librdkafkaPath() {
  const pkgDir = path.dirname(from.resolve('@confluentinc/kafka-javascript/package.json'));
  return path.join(pkgDir, 'build', 'deps', 'librdkafka.so.1');
}

function apiMock() {
  const koffi = load('koffi');
  if (!fs.existsSync(librdkafkaPath())) fail(`KCID_MOCK=api needs ${librdkafkaPath()} (a CKJS_LINKING=dynamic build)`);
  const lib = koffi.load(librdkafkaPath());
  const confNew = lib.func('void *rd_kafka_conf_new()');
  const confSet = lib.func('int rd_kafka_conf_set(void *conf, str name, str value, _Out_ uint8_t *errstr, size_t size)');
  const kafkaNew = lib.func('void *rd_kafka_new(int type, void *conf, _Out_ uint8_t *errstr, size_t size)');
  const kafkaDestroy = lib.func('void rd_kafka_destroy(void *rk)');
  const clusterNew = lib.func('void *rd_kafka_mock_cluster_new(void *rk, int broker_cnt)');
  const clusterDestroy = lib.func('void rd_kafka_mock_cluster_destroy(void *mcluster)');
  const bootstraps = lib.func('str rd_kafka_mock_cluster_bootstraps(void *mcluster)');
  const setMetrics = lib.func('int rd_kafka_mock_telemetry_set_requested_metrics(void *mcluster, str *metrics, size_t cnt)');
  const setPushInterval = lib.func('int rd_kafka_mock_telemetry_set_push_interval(void *mcluster, int64_t ms)');

  const errstr = Buffer.alloc(512);
  const conf = confNew();
  // The handle only hosts the mock; it has no brokers of its own and sends nothing.
  for (const [k, v] of [['client.id', 'kcid-mock-host'], ['log_level', '4'], ['enable.metrics.push', 'false']]) {
    if (confSet(conf, k, v, errstr, errstr.length) !== 0) fail(`rd_kafka_conf_set ${k}: ${cstr(errstr)}`);
  }
  const rk = kafkaNew(1 /* RD_KAFKA_CONSUMER: no producer threads */, conf, errstr, errstr.length);
  if (!rk) fail(`rd_kafka_new: ${cstr(errstr)}`);
  const mcluster = clusterNew(rk, 3);
  if (!mcluster) fail('rd_kafka_mock_cluster_new failed');
  let err = setMetrics(mcluster, REQUESTED_METRICS, REQUESTED_METRICS.length);
  if (err !== 0) fail(`rd_kafka_mock_telemetry_set_requested_metrics: error ${err}`);
  err = setPushInterval(mcluster, PUSH_INTERVAL_MS);
  if (err !== 0) fail(`rd_kafka_mock_telemetry_set_push_interval: error ${err}`);
  const brokers = bootstraps(mcluster);
  return {
    brokers: () => brokers,
    producerConf: { 'bootstrap.servers': brokers },
    close() {
      clusterDestroy(mcluster);
      kafkaDestroy(rk);
    },
  };
}

function cstr(buf) {
  const end = buf.indexOf(0);
  return buf.toString('utf8', 0, end < 0 ? buf.length : end);
}

// The producer owns the mock; its brokers show in the log line (level 5, logged without `debug`)
//   Mock cluster enabled: original bootstrap.servers and security.protocol ignored and replaced with
//   127.0.0.1:A,127.0.0.1:B,127.0.0.1:C
// and, should that line ever be missed, in the metadata that connect() fetches.
function confMock() {
  let logged = null;
  return {
    producerConf: { 'test.mock.num.brokers': 3, 'bootstrap.servers': '127.0.0.1:9' },
    onLog(l) {
      const m = /Mock cluster enabled.*replaced with ([0-9.:,]+)/.exec(l.message);
      if (m) logged ??= m[1];
    },
    brokers: (metadata) => logged ?? metadata.brokers.map((b) => `${b.host}:${b.port}`).join(','),
    close() {},
  };
}

// --- clients -------------------------------------------------------------------------------------------

const promisify = (fn) => new Promise((resolve, reject) => fn((err, v) => (err ? reject(err) : resolve(v))));

async function produce(mock) {
  const producer = new Kafka.Producer({
    ...mock.producerConf,
    'client.id': 'kcid-modern-producer',
    'enable.idempotence': true,
    'linger.ms': 5,
    dr_cb: true,
  });
  logTo(producer, 'producer');
  if (mock.onLog) producer.on('event.log', mock.onLog);
  const metadata = await promisify((cb) => producer.connect({ topic: TOPIC, timeout: 5000 }, cb));
  const brokers = mock.brokers(metadata);
  console.log(`mock brokers: ${brokers}`);

  let delivered = 0;
  const allDelivered = new Promise((resolve, reject) => {
    producer.on('delivery-report', (err) => {
      if (err) reject(err);
      else if (++delivered === MESSAGES) resolve();
    });
  });
  producer.setPollInterval(50);
  for (let i = 1; i <= MESSAGES; i++) {
    producer.produce(TOPIC, null, Buffer.from(`message ${i} of kcid `.repeat(4)), `k${i}`, Date.now(), null, [
      { origin: 'kcid-modern' },
    ]);
  }
  await promisify((cb) => producer.flush(5000, cb));
  await allDelivered;
  return { producer, brokers, delivered };
}

async function consume(brokers) {
  const consumer = new Kafka.KafkaConsumer({
    'bootstrap.servers': brokers,
    'client.id': 'kcid-modern-consumer',
    'group.id': GROUP,
    'group.protocol': 'consumer',
    'auto.offset.reset': 'earliest',
  });
  logTo(consumer, 'consumer');
  await promisify((cb) => consumer.connect({ topic: TOPIC, timeout: 5000 }, cb));
  consumer.subscribe([TOPIC]);
  consumer.setDefaultConsumeTimeout(200);
  const got = [];
  const deadline = Date.now() + CONSUME_TIMEOUT_MS;
  while (got.length < MESSAGES && Date.now() < deadline) {
    const batch = await promisify((cb) => consumer.consume(MESSAGES, cb));
    got.push(...batch);
  }
  // Linger so heartbeats (and, in api mode, telemetry pushes) happen with a live assignment.
  const lingerUntil = Date.now() + LINGER_MS;
  while (Date.now() < lingerUntil) await promisify((cb) => consumer.consume(1, cb));
  if (got.length > 0) consumer.commitSync(null);
  await promisify((cb) => consumer.disconnect(cb));
  return got;
}

async function main() {
  const mock = mode === 'api' ? apiMock() : confMock();
  console.error(
    `modern-client: @confluentinc/kafka-javascript ${pkgVersion}, librdkafka ${Kafka.librdkafkaVersion}, mock via ${mode}`,
  );
  const { producer, brokers, delivered } = await produce(mock);
  const got = await consume(brokers);
  await promisify((cb) => producer.disconnect(5000, cb));
  mock.close();
  console.log(`mode: ${mode}`);
  console.log(`library: @confluentinc/kafka-javascript ${pkgVersion}, librdkafka ${Kafka.librdkafkaVersion}`);
  console.log(`produced: ${delivered}`);
  console.log(`consumed: ${got.length}`);
  for (const m of got) console.log(`  ${m.partition}@${m.offset} ${m.key}: ${m.value.toString().slice(0, 20)}...`);
  if (got.length !== MESSAGES) {
    console.error(`modern-client: consumed ${got.length} of ${MESSAGES} messages`);
    process.exitCode = 1;
  }
}

main().catch((err) => {
  console.error(`modern-client: ${err?.stack ?? err}`);
  process.exit(1);
});
