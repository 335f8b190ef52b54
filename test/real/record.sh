#!/usr/bin/env bash
# Record small, real Kafka client captures on the loopback interface, for use as test fixtures.
#
#   test/real/record.sh OUTDIR [kind...]
#
# Kinds (default: all of them, in this order):
#   produce         kcat-mock-produce.pcap            tcpdump -i lo, pcap (µs), Ethernet;
#                                                     idempotent producer, lz4, 6 keyed messages with a header
#   metadata-any    kcat-mock-metadata-any.pcap       tcpdump -i any -y LINUX_SLL, pcap (µs), cooked v1; kcat -L -t
#   metadata-sll2   kcat-mock-metadata-any-sll2.pcap  tcpdump -i any -y LINUX_SLL2, pcap (µs), cooked v2; kcat -L -t
#                   (tcpdump 4.99.3 / libpcap 1.10.3 pick LINUX_SLL2 for -i any when -y is not given)
#   consumer-group  kcat-mock-consumer-group.pcapng   dumpcap -i lo, pcapng (ns); kcat -G consumer reading 5 messages
#   nano            kcat-mock-nano.pcap               tcpdump --time-stamp-precision=nano -i lo, pcap (ns);
#                                                     zstd producer then a plain (-C) consumer, on one cluster
#   modern          ckjs-mock-telemetry.pcap          tcpdump -i lo, pcap (µs), Ethernet; node test/real/modern-client.mjs:
#                                                     @confluentinc/kafka-javascript (librdkafka 2.x): idempotent
#                                                     producer, KIP-848 consumer, KIP-714 telemetry. Needs CKJS_DIR, a
#                                                     folder whose node_modules holds that package (built from source),
#                                                     and koffi there too for PushTelemetry; skipped without CKJS_DIR.
#   large           kcat-mock-large.pcap              tcpdump -i lo, pcap (µs), Ethernet; one uncompressed message of
#                                                     90112 bytes produced, then read back (kcat -C): the Produce request
#                                                     and the Fetch response each span three TCP segments (loopback
#                                                     segments carry at most 32 KiB here, and lo's MTU is 64 KiB)
#   kafkajs         kafkajs-mock-group.pcap           tcpdump -i lo, pcap (µs), Ethernet; node test/real/kafkajs-client.mjs:
#                                                     kafkajs 2.x (pure JavaScript, a devDependency) on a host kcat's
#                                                     mock cluster: gzip producer (3 keyed messages with a header), then
#                                                     a consumer group reading them from the beginning
#   tls             kafkajs-tls-<variant>.pcap        tcpdump -i lo, pcap (µs), Ethernet; node test/real/tls-client.mjs:
#                   kafkajs-tls-<variant>.keys        kafkajs 2.x producers with `ssl` to Node TLS servers that relay
#                   kafkajs-tls-tls13-aes256gcm-dsb.pcapng
#                                                     plaintext to a host kcat's mock cluster, one variant per TLS 1.3
#                                                     suite and TLS 1.2 family (ECDHE with AES-GCM, ChaCha20-Poly1305,
#                                                     AES-CBC + HMAC-SHA1 and SHA256; RSA key exchange with AES-GCM);
#                                                     the key log from Node's 'keylog' event, next to each capture.
#                                                     Each file holds both legs: TLS to the server, plaintext from it to
#                                                     the mock. The -dsb.pcapng is one of them with its key log inside
#                                                     (editcap --inject-secrets). The certificate is made per run
#                                                     (openssl, RSA 2048, thrown away); the key logs are test data.
#
# Only loopback traffic: every client talks to kcat's in-process mock cluster (librdkafka
# `test.mock.num.brokers=3`; for modern, the same mock of the library's own librdkafka), which listens
# on 127.0.0.1 at random ports. The bootstrap address given
# with -b is ignored by librdkafka once the mock cluster is enabled; it is 127.0.0.1 anyway.
#
# Each kcat process with test.mock.num.brokers owns its OWN cluster. For kinds that need data to exist
# before the captured client runs, a "host" kcat producer owns the cluster: it is started before the
# capture, idles with its stdin held open (kcat buffers stdin and sends nothing until EOF), and is
# stopped after the capture. Other clients reach the host's cluster through its brokers' ports.
#
# The capture filter is `tcp`; afterwards, if the capture holds packets of other loopback TCP traffic,
# it is reduced with tshark to the mock cluster's ports (and the script says so).
#
# Needs: kcat, tcpdump, tshark, capinfos, timeout (coreutils); dumpcap for consumer-group; node for modern
# and kafkajs (kafkajs itself from the repository's node_modules: npm install).
# Runs as root (capturing needs it), without a TTY or stdin. Prints one summary block per file written.
set -euo pipefail

readonly ALL_KINDS=(produce metadata-any metadata-sll2 consumer-group nano modern kafkajs large tls)
readonly CLIENT_TIMEOUT=30 # seconds any one kcat client may run
readonly CAPTURE_MAX=120   # seconds a capture process may live even if this script is killed
readonly READY_TIMEOUT=10  # seconds to wait for a capture tool or a mock cluster to come up
readonly TOPIC=kcid-fixture
readonly GROUP=kcid-group
readonly BOOTSTRAP=127.0.0.1:9 # ignored by librdkafka when the mock cluster is enabled
readonly MODERN_CLIENT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/modern-client.mjs
readonly KAFKAJS_CLIENT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/kafkajs-client.mjs
readonly TLS_CLIENT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/tls-client.mjs
readonly CKJS_PACKAGE=@confluentinc/kafka-javascript

usage() {
  echo "usage: $0 OUTDIR [kind...]" >&2
  echo "kinds: ${ALL_KINDS[*]} (default: all)" >&2
  exit 2
}

die() {
  echo "record.sh: error: $*" >&2
  exit 1
}

log() { echo "record.sh: $*" >&2; }

[[ $# -ge 1 ]] || usage
case $1 in -h | --help) usage ;; esac
OUTDIR=$1
shift
KINDS=("$@")
[[ ${#KINDS[@]} -gt 0 ]] || KINDS=("${ALL_KINDS[@]}")

for kind in "${KINDS[@]}"; do
  [[ " ${ALL_KINDS[*]} " == *" $kind "* ]] || die "unknown kind '$kind' (known: ${ALL_KINDS[*]})"
done

need() {
  command -v "$1" >/dev/null 2>&1 || die "'$1' not found; install it ($2)"
}
KCAT_KINDS=0
for kind in "${KINDS[@]}"; do [[ $kind == modern ]] || KCAT_KINDS=1; done # kafkajs needs kcat's mock too
[[ $KCAT_KINDS -eq 1 ]] && need kcat "apt-get install kcat"
need tcpdump "apt-get install tcpdump"
need tshark "apt-get install tshark"
need capinfos "apt-get install wireshark-common"
need timeout "coreutils"
[[ " ${KINDS[*]} " == *" consumer-group "* ]] && need dumpcap "apt-get install wireshark-common"
if [[ " ${KINDS[*]} " == *" tls "* ]]; then
  need openssl "apt-get install openssl"
  need editcap "apt-get install wireshark-common"
fi
[[ " ${KINDS[*]} " == *" modern "* ]] && need node "Node.js 18 or later"
if [[ " ${KINDS[*]} " == *" kafkajs "* || " ${KINDS[*]} " == *" tls "* ]]; then
  need node "Node.js 18 or later"
  (cd "$(dirname "$KAFKAJS_CLIENT")" && node -e 'require.resolve("kafkajs")') >/dev/null 2>&1 ||
    die "kafkajs not found; run 'npm install' in the repository (it is a devDependency)"
fi
[[ $(id -u) -eq 0 ]] || die "must run as root to capture on loopback"

mkdir -p "$OUTDIR" || die "cannot create $OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kcid-record.XXXXXX")

# PIDs this script started and must stop; each is stopped by its own PID.
PIDS=()

stop_pid() { # pid: TERM, wait up to 5 s, then KILL
  local pid=$1 i
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null || true
  forget_pid "$pid"
}

forget_pid() { # so that cleanup never signals a PID that has since been reused
  local keep=() p
  for p in "${PIDS[@]}"; do [[ $p == "$1" ]] || keep+=("$p"); done
  PIDS=("${keep[@]}")
}

cleanup() {
  local rc=$? pid
  touch "$WORK/stop" 2>/dev/null || true
  for pid in "${PIDS[@]}"; do stop_pid "$pid"; done
  if [[ $rc -ne 0 && -d $WORK ]]; then
    log "failed; logs of the last run follow"
    for f in "$WORK"/*.log; do
      [[ -s $f ]] && { echo "--- $(basename "$f")" >&2; tail -n 20 "$f" >&2; }
    done
  fi
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

wait_for_line() { # file regex what: poll until file holds a line matching regex
  local file=$1 regex=$2 what=$3 i
  for ((i = 0; i < READY_TIMEOUT * 10; i++)); do
    grep -qE "$regex" "$file" 2>/dev/null && return 0
    sleep 0.1
  done
  die "timed out after ${READY_TIMEOUT}s waiting for $what (see $file)"
}

# The mock cluster logs (level 5, printed without -d):
#   Mock cluster enabled: original bootstrap.servers and security.protocol ignored and replaced with
#   127.0.0.1:39515,127.0.0.1:36089,127.0.0.1:34529
mock_brokers() { # log file -> "127.0.0.1:A,127.0.0.1:B,127.0.0.1:C"
  wait_for_line "$1" 'Mock cluster enabled.*replaced with' "kcat's mock cluster in $1"
  sed -n 's/.*Mock cluster enabled.*replaced with \([0-9.:,]*\).*/\1/p' "$1" | head -n 1
}

ports_of() { echo "$1" | sed 's/127\.0\.0\.1://g'; } # "127.0.0.1:A,..." -> "A,B,C"

kcat_client() { # log-name kcat-args...: run one bounded kcat with the mock or -b given by the caller
  local name=$1
  shift
  timeout -k 5 "$CLIENT_TIMEOUT" kcat "$@" 2>"$WORK/$name.log" ||
    die "kcat ($name) failed or timed out with status $?: kcat $*"
}

# --- the host: an idle producer owning a mock cluster ------------------------------------------------

HOST_PID=
HOST_BROKERS=

start_host() {
  rm -f "$WORK/stop"
  # The left side holds kcat's stdin open, writing nothing, until told to stop (or the run is over).
  {
    for ((i = 0; i < (CAPTURE_MAX + CLIENT_TIMEOUT) * 10; i++)); do
      [[ -e $WORK/stop || ! -d $WORK ]] && break
      sleep 0.1
    done
  } | timeout -k 5 "$((CAPTURE_MAX + CLIENT_TIMEOUT))" kcat -b "$BOOTSTRAP" -X test.mock.num.brokers=3 \
    -X client.id=kcid-host -P -t "$TOPIC" 2>"$WORK/host.log" &
  HOST_PID=$!
  PIDS+=("$HOST_PID")
  HOST_BROKERS=$(mock_brokers "$WORK/host.log")
  # Let the host create the topic (Metadata auto-creates it: 4 partitions over 3 brokers).
  sleep 1
}

stop_host() {
  touch "$WORK/stop"
  local i
  for ((i = 0; i < 100; i++)); do
    kill -0 "$HOST_PID" 2>/dev/null || break
    sleep 0.1
  done
  stop_pid "$HOST_PID"
}

# --- captures ----------------------------------------------------------------------------------------

CAP_PID=

start_tcpdump() { # raw-file tcpdump-args...
  local raw=$1
  shift
  # -Z root: Debian's tcpdump otherwise drops to user tcpdump, who may not write to $WORK.
  # --immediate-mode: with TPACKET_V3, packets otherwise sit in a ring block until it times out,
  # and a SIGTERM in between loses them. -G/-W: tcpdump exits by itself after CAPTURE_MAX seconds.
  # -B: a 16 MiB kernel buffer (2 MiB by default), so a capture on a loaded machine (the test suite's
  # other workers) is not cut by kernel drops while tcpdump waits for a core.
  tcpdump -Z root -U --immediate-mode -B 16384 -G "$CAPTURE_MAX" -W 1 "$@" -w "$raw" tcp \
    </dev/null >"$WORK/capture.log" 2>&1 &
  CAP_PID=$!
  PIDS+=("$CAP_PID")
  wait_for_line "$WORK/capture.log" 'listening on' "tcpdump to start"
  sleep 0.3
}

start_dumpcap() { # raw-file dumpcap-args...
  local raw=$1
  shift
  dumpcap -q -a "duration:$CAPTURE_MAX" "$@" -f tcp -w "$raw" </dev/null >"$WORK/capture.log" 2>&1 &
  CAP_PID=$!
  PIDS+=("$CAP_PID")
  wait_for_line "$WORK/capture.log" 'Capturing on' "dumpcap to start"
  sleep 0.3
}

stop_capture() {
  sleep 0.5 # let the last FIN/ACKs reach the capture
  stop_pid "$CAP_PID"
}

# --- output ------------------------------------------------------------------------------------------

port_filter() { # "A,B,C" -> "tcp.port == A || tcp.port == B || tcp.port == C"
  echo "$1" | sed 's/^/tcp.port == /; s/,/ || tcp.port == /g'
}

decode_as() { # "A,B,C" -> -d tcp.port==A,kafka ...
  local p
  for p in ${1//,/ }; do printf -- '-d tcp.port==%s,kafka ' "$p"; done
}

# finish raw-file out-name tshark-format "A,B,C"
finish() {
  local raw=$1 out=$OUTDIR/$2 format=$3 ports=$4 filter foreign
  [[ -s $raw ]] || die "capture $raw is empty"
  filter=$(port_filter "$ports")
  foreign=$(tshark -r "$raw" -Y "!($filter)" -T fields -e frame.number 2>/dev/null | wc -l)
  if [[ $foreign -gt 0 ]]; then
    log "$2: dropping $foreign packets of other loopback TCP traffic (rewritten by tshark -F $format)"
    tshark -r "$raw" -Y "$filter" -F "$format" -w "$out" 2>/dev/null || die "tshark could not filter $raw"
  else
    cp "$raw" "$out"
  fi
  chmod 0644 "$out" # dumpcap creates its file 0600
  WRITTEN=$((WRITTEN + 1))
  summarize "$out" "$ports"
}

summarize() { # file "A,B,C"
  local file=$1 ports=$2 requests lost
  echo "== $file"
  echo "   size $(stat -c %s "$file") bytes; mock broker ports $ports"
  capinfos -T -r -t -E -c -u -M "$file" 2>/dev/null |
    awk -F'\t' '{ printf "   %s, link type %s, %s packets, %s s\n", $2, $3, $4, $5 }'
  # A frame may carry several Kafka PDUs; tshark then lists each field's values comma-separated.
  requests=$(tshark -r "$file" $(decode_as "$ports") \
    -Y "kafka && ($(port_filter "$ports" | sed 's/tcp\.port/tcp.dstport/g'))" \
    -T fields -E 'separator=;' -e kafka.api_key -e kafka.api_version 2>/dev/null |
    awk -F';' '{ n = split($1, k, ","); split($2, v, ","); for (i = 1; i <= n; i++) print "key " k[i] " v" v[i] }' |
    sort -V | uniq -c)
  echo "   requests: $(echo "$requests" | awk '{ s += $1 } END { print s + 0 }')"
  echo "$requests" | sed 's/^ */   /'
  # On a loaded machine the capture itself can miss a segment now and then (kernel drops); a fixture
  # should not, so say so.
  lost=$(tshark -r "$file" -Y 'tcp.analysis.lost_segment || tcp.analysis.ack_lost_segment' -T fields \
    -e frame.number 2>/dev/null | wc -l)
  [[ $lost -eq 0 ]] || log "$(basename "$file"): warning: the capture missed segments ($lost packets flagged by tshark as after a lost or before an unseen segment); record again for a clean file"
}

# librdkafka sends a batch uncompressed when compressing does not make it smaller, so the values
# repeat themselves: "kN:" then "message N of kcid " eight times (144 bytes).
messages() { # count
  local i j
  for ((i = 1; i <= $1; i++)); do
    printf 'k%d:' "$i"
    for ((j = 0; j < 8; j++)); do printf 'message %d of kcid ' "$i"; done
    printf '\n'
  done
}

# --- the kinds ---------------------------------------------------------------------------------------

ckjs_resolves() { # module: true when node resolves it from $CKJS_DIR
  (cd "$CKJS_DIR" && node -e 'require.resolve(process.argv[1])' "$1") >/dev/null 2>&1
}

record_produce() {
  local raw=$WORK/produce.pcap brokers
  start_tcpdump "$raw" -i lo
  messages 6 | kcat_client produce -b "$BOOTSTRAP" -X test.mock.num.brokers=3 \
    -X client.id=kcid-producer -X enable.idempotence=true -z lz4 \
    -P -t "$TOPIC" -K : -H origin=kcid
  stop_capture
  brokers=$(mock_brokers "$WORK/produce.log")
  finish "$raw" kcat-mock-produce.pcap pcap "$(ports_of "$brokers")"
}

record_metadata() { # out-name tcpdump-args...
  local out=$1 raw=$WORK/metadata.pcap brokers
  shift
  start_tcpdump "$raw" -i any "$@"
  kcat_client metadata -b "$BOOTSTRAP" -X test.mock.num.brokers=3 -X client.id=kcid-metadata \
    -L -t "$TOPIC" </dev/null >/dev/null
  stop_capture
  brokers=$(mock_brokers "$WORK/metadata.log")
  finish "$raw" "$out" pcap "$(ports_of "$brokers")"
}

record_consumer_group() {
  local raw=$WORK/consumer-group.pcapng got
  start_host
  messages 5 | kcat_client seed -b "$HOST_BROKERS" -X client.id=kcid-seed -z gzip \
    -P -t "$TOPIC" -K :
  start_dumpcap "$raw" -i lo --capture-comment "kcid fixture: kcat -G consumer group on librdkafka mock cluster"
  got=$(kcat_client consumer -b "$HOST_BROKERS" -X client.id=kcid-consumer \
    -X auto.offset.reset=earliest -G "$GROUP" -c 5 -e -f '%k:%s\n' "$TOPIC" </dev/null | wc -l)
  stop_capture
  stop_host
  [[ $got -eq 5 ]] || die "consumer group read $got of 5 messages"
  finish "$raw" kcat-mock-consumer-group.pcapng pcapng "$(ports_of "$HOST_BROKERS")"
}

record_nano() {
  local raw=$WORK/nano.pcap got
  start_host
  start_tcpdump "$raw" -i lo --time-stamp-precision=nano
  messages 6 | kcat_client producer -b "$HOST_BROKERS" -X client.id=kcid-producer-zstd \
    -X compression.codec=zstd -P -t "$TOPIC" -K :
  got=$(kcat_client consumer -b "$HOST_BROKERS" -X client.id=kcid-consumer-simple \
    -C -t "$TOPIC" -o beginning -e -f '%k:%s\n' </dev/null | wc -l)
  stop_capture
  stop_host
  [[ $got -eq 6 ]] || die "plain consumer read $got of 6 messages"
  finish "$raw" kcat-mock-nano.pcap nsecpcap "$(ports_of "$HOST_BROKERS")"
}

# One node process: the mock cluster (3 brokers), an idempotent producer (3 keyed messages), a KIP-848
# consumer reading them back and lingering 2.5 s, both pushing KIP-714 telemetry. The script prints
# "mock brokers: 127.0.0.1:A,127.0.0.1:B,127.0.0.1:C" on stdout; see its header for the two mock modes.
record_modern() {
  local raw=$WORK/modern.pcap brokers
  if [[ -z ${CKJS_DIR:-} ]]; then
    log "skipping modern: set CKJS_DIR to a folder where '$CKJS_PACKAGE' is installed"
    return 0
  fi
  if ! ckjs_resolves "$CKJS_PACKAGE"; then
    log "skipping modern: '$CKJS_PACKAGE' not found from CKJS_DIR=$CKJS_DIR"
    return 0
  fi
  start_tcpdump "$raw" -i lo
  CKJS_DIR=$CKJS_DIR KCID_TOPIC=$TOPIC KCID_GROUP=$GROUP timeout -k 5 "$CLIENT_TIMEOUT" \
    node "$MODERN_CLIENT" >"$WORK/modern.out" 2>"$WORK/modern.log" ||
    die "modern-client.mjs failed or timed out with status $? (see $WORK/modern.log)"
  stop_capture
  sed 's/^/   /' "$WORK/modern.out" >&2
  grep -qx 'mode: conf' "$WORK/modern.out" &&
    log "modern: mock from test.mock.num.brokers (no koffi in CKJS_DIR, or a static build): it requests no metrics, so no PushTelemetry"
  brokers=$(sed -n 's/^mock brokers: \([0-9.:,]*\)$/\1/p' "$WORK/modern.out" | head -n 1)
  [[ -n $brokers ]] || die "modern-client.mjs printed no 'mock brokers:' line"
  finish "$raw" ckjs-mock-telemetry.pcap pcap "$(ports_of "$brokers")"
}

# A message larger than the loopback MTU (65536), uncompressed, so that the Produce request and the
# Fetch response that carry it are each reassembled from several segments.
record_large() {
  local raw=$WORK/large.pcap got
  start_host
  start_tcpdump "$raw" -i lo
  { printf 'big:'; for ((i = 0; i < 4096; i++)); do printf 'large message of kcid '; done; printf '\n'; } |
    kcat_client producer -b "$HOST_BROKERS" -X client.id=kcid-producer-large -z none -P -t "$TOPIC" -K :
  got=$(kcat_client consumer -b "$HOST_BROKERS" -X client.id=kcid-consumer-large \
    -C -t "$TOPIC" -o beginning -e -f '%S\n' </dev/null)
  stop_capture
  stop_host
  [[ $got == 90112 ]] || die "plain consumer read '$got', not one message of 90112 bytes"
  finish "$raw" kcat-mock-large.pcap pcap "$(ports_of "$HOST_BROKERS")"
}

# kafkajs cannot make a mock cluster: it runs against the host's. The host starts before the capture,
# so its own (idle) connections to the cluster are not in it.
record_kafkajs() {
  local raw=$WORK/kafkajs.pcap
  start_host
  start_tcpdump "$raw" -i lo
  KCID_BROKERS=$HOST_BROKERS KCID_TOPIC=$TOPIC KCID_GROUP=$GROUP timeout -k 5 "$CLIENT_TIMEOUT" \
    node "$KAFKAJS_CLIENT" >"$WORK/kafkajs.out" 2>"$WORK/kafkajs.log" ||
    die "kafkajs-client.mjs failed or timed out with status $? (see $WORK/kafkajs.log)"
  stop_capture
  stop_host
  sed 's/^/   /' "$WORK/kafkajs.out" >&2
  finish "$raw" kafkajs-mock-group.pcap pcap "$(ports_of "$HOST_BROKERS")"
}

# TLS: one capture for all variants, cut per variant by its ports (its TLS servers', and the local
# ports of its relays' connections to the mock). Each file is checked with tshark: the requests it
# decrypts with the key log must be as many as those on the plaintext leg.
record_tls() {
  local raw=$WORK/tls.pcap line name tls_ports up_ports filter out plain decrypted lost dropped
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/tls-key.pem" -out "$WORK/tls-cert.pem" \
    -subj '/O=kcid fixtures/CN=broker1.kafka.test' -days 30 >"$WORK/openssl.log" 2>&1 ||
    die "openssl could not make a test certificate (see $WORK/openssl.log)"
  start_host
  start_tcpdump "$raw" -i lo
  KCID_BROKERS=$HOST_BROKERS KCID_TOPIC=$TOPIC KCID_CERT=$WORK/tls-cert.pem KCID_KEY=$WORK/tls-key.pem KCID_OUT=$WORK \
    timeout -k 5 "$CLIENT_TIMEOUT" node "$TLS_CLIENT" ${KCID_TLS_VARIANTS:-} >"$WORK/tls.out" 2>"$WORK/tls.log" ||
    die "tls-client.mjs failed or timed out with status $? (see $WORK/tls.log)"
  stop_capture
  stop_host
  [[ -s $raw ]] || die "capture $raw is empty"
  # tcpdump's own count, printed as it exits: packets the kernel dropped before tcpdump read them.
  dropped=$(sed -n 's/^\([0-9][0-9]*\) packets\{0,1\} dropped by kernel$/\1/p' "$WORK/capture.log" | head -n 1)
  dropped=${dropped:-0}
  [[ $dropped -eq 0 ]] || log "tls: warning: the kernel dropped $dropped packets of the capture; record again for clean files"
  while read -r line; do
    read -r _ name _ tls_ports _ up_ports _ <<<"$line"
    filter="$(port_filter "$tls_ports,$up_ports")"
    out=$OUTDIR/kafkajs-tls-$name.pcap
    tshark -r "$raw" -Y "$filter" -F pcap -w "$out" 2>/dev/null || die "tshark could not cut $name from $raw"
    install -m 0644 "$WORK/$name.keys" "$OUTDIR/kafkajs-tls-$name.keys"
    chmod 0644 "$out"
    WRITTEN=$((WRITTEN + 1))
    plain=$(tshark -r "$out" $(decode_as "$(ports_of "$HOST_BROKERS")") -Y "kafka && ($(port_filter "$(ports_of "$HOST_BROKERS")" | sed 's/tcp\.port/tcp.dstport/g'))" \
      -T fields -e kafka.api_key 2>/dev/null | tr ',' '\n' | grep -c . || true)
    decrypted=$(tshark -r "$out" -o "tls.keylog_file:$OUTDIR/kafkajs-tls-$name.keys" $(tls_decode_as "$tls_ports") \
      -Y "kafka && ($(port_filter "$tls_ports" | sed 's/tcp\.port/tcp.dstport/g'))" -T fields -e kafka.api_key 2>/dev/null | tr ',' '\n' | grep -c . || true)
    echo "== $out (+ kafkajs-tls-$name.keys)"
    echo "   size $(stat -c %s "$out") bytes; TLS ports $tls_ports, relay ports $up_ports; mock broker ports $(ports_of "$HOST_BROKERS")"
    echo "   requests: $plain on the plaintext leg, $decrypted decrypted by tshark on the TLS leg"
    # Segments the capture missed (on a loaded machine), as tshark sees them, and the run's kernel drops.
    lost=$(tshark -r "$out" -Y 'tcp.analysis.lost_segment || tcp.analysis.ack_lost_segment' -T fields -e frame.number 2>/dev/null | wc -l)
    echo "   capture losses: $lost packets after a lost or before an unseen segment; $dropped packets dropped by the kernel in this run"
    [[ $plain -gt 0 && $plain -eq $decrypted ]] || log "kafkajs-tls-$name.pcap: warning: tshark decrypts $decrypted requests, the plaintext leg has $plain"
  done <"$WORK/tls.out"
  [[ -s $OUTDIR/kafkajs-tls-tls13-aes256gcm.pcap ]] || return 0
  editcap --inject-secrets "tls,$OUTDIR/kafkajs-tls-tls13-aes256gcm.keys" "$OUTDIR/kafkajs-tls-tls13-aes256gcm.pcap" \
    "$OUTDIR/kafkajs-tls-tls13-aes256gcm-dsb.pcapng" || die "editcap could not inject the key log"
  chmod 0644 "$OUTDIR/kafkajs-tls-tls13-aes256gcm-dsb.pcapng"
  WRITTEN=$((WRITTEN + 1))
  echo "== $OUTDIR/kafkajs-tls-tls13-aes256gcm-dsb.pcapng (kafkajs-tls-tls13-aes256gcm.pcap with its key log in a Decryption Secrets Block)"
}

tls_decode_as() { # "A,B,C" -> -d tcp.port==A,tls -d tls.port==A,kafka ...
  local p
  # tshark 4.0 tries its heuristic dissectors on TLS application data before the port's: RDP
  # multi-transport's claims some Produce requests, so it is turned off.
  printf -- '--disable-protocol rdpmt '
  for p in ${1//,/ }; do printf -- '-d tcp.port==%s,tls -d tls.port==%s,kafka ' "$p" "$p"; done
}

[[ $KCAT_KINDS -eq 1 ]] && log "$(kcat -V 2>&1 | grep -o 'Version [^ ]*\|librdkafka [0-9.]*' | tr '\n' ' ')"
started=$SECONDS
WRITTEN=0
for kind in "${KINDS[@]}"; do
  log "recording $kind"
  case $kind in
  produce) record_produce ;;
  metadata-any) record_metadata kcat-mock-metadata-any.pcap -y LINUX_SLL ;;
  metadata-sll2) record_metadata kcat-mock-metadata-any-sll2.pcap -y LINUX_SLL2 ;;
  consumer-group) record_consumer_group ;;
  nano) record_nano ;;
  modern) record_modern ;;
  kafkajs) record_kafkajs ;;
  large) record_large ;;
  tls) record_tls ;;
  esac
done
log "done in $((SECONDS - started))s; wrote $WRITTEN file(s) to $OUTDIR"
