#!/usr/bin/env bash
# Local engine manager: real Apache Kafka (single KRaft node), ClickHouse 18.16
# and Redis, each an ordinary background process listening on 127.0.0.1 only,
# with all state under $ENGINES_DIR (default <repo>/.engines).
#
#   scripts/engines.sh install          install what is missing, start nothing
#   scripts/engines.sh up               install if needed, start, wait until each answers
#   scripts/engines.sh down [--purge]   stop (SIGTERM, wait, SIGKILL); --purge deletes data (not the cache)
#   scripts/engines.sh status           one line per engine; exit 0 only if all selected are up
#   scripts/engines.sh kafka-run CLASS [ARGS...]   run a Kafka tool class from the cached jars
#        e.g. kafka-run org.apache.kafka.tools.TopicCommand --bootstrap-server 127.0.0.1:19092 --list
#
# Environment (defaults): ENGINES="kafka clickhouse redis", ENGINES_DIR=<repo>/.engines,
#   KAFKA_PORT=19092 KAFKA_CONTROLLER_PORT=19093 CLICKHOUSE_HTTP_PORT=18123
#   CLICKHOUSE_TCP_PORT=19000 REDIS_PORT=16379, KAFKA_HEAP_OPTS="-Xmx512m -Xms256m",
#   KAFKA_START_TIMEOUT=90 CLICKHOUSE_START_TIMEOUT=30 REDIS_START_TIMEOUT=30,
#   ENGINES_INSTALL_COMPOSE=1 (install Debian's docker-compose when no compose is available).
# ENGINES_TOPOLOGY=single (default: the above) or replicated: 3 Kafka brokers, 2 ClickHouse replicas with ZooKeeper,
#   Redis primary + replica + 3 Sentinels, under $ENGINES_DIR/replicated (scripts/engines/replicated/topology.sh,
#   docs/replicated-topology.md); install, up, down [--purge] and status apply to it.
# ClickHouse's read-only "analyst" user (scripts/engines/clickhouse/users.d/analyst.xml, docs/querying-the-store.md),
#   read when the server starts: CLICKHOUSE_ANALYST_PASSWORD (unset: a random one, kept in
#   $ENGINES_DIR/clickhouse/analyst.password, mode 0600), CLICKHOUSE_ANALYST_DATABASE=${CLICKHOUSE_DATABASE:-gateway};
#   set, these replace the file's limits: CLICKHOUSE_ANALYST_MAX_RESULT_ROWS, CLICKHOUSE_ANALYST_MAX_ROWS_TO_READ
#   (per query), CLICKHOUSE_ANALYST_QUERIES_PER_HOUR, CLICKHOUSE_ANALYST_READ_ROWS_PER_HOUR (quota).
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
TPL_DIR=$SCRIPT_DIR/engines

ENGINES=${ENGINES:-kafka clickhouse redis}
ENGINES_DIR=${ENGINES_DIR:-$REPO_ROOT/.engines}
KAFKA_PORT=${KAFKA_PORT:-19092}
KAFKA_CONTROLLER_PORT=${KAFKA_CONTROLLER_PORT:-19093}
CLICKHOUSE_HTTP_PORT=${CLICKHOUSE_HTTP_PORT:-18123}
CLICKHOUSE_TCP_PORT=${CLICKHOUSE_TCP_PORT:-19000}
REDIS_PORT=${REDIS_PORT:-16379}
KAFKA_HEAP_OPTS=${KAFKA_HEAP_OPTS:--Xmx512m -Xms256m}
# Fixed KRaft cluster id (22-char base64 UUID); only used when the log dir is formatted.
KAFKA_CLUSTER_ID=${KAFKA_CLUSTER_ID:-b9E1mIk2QvG5hS2eYqQn3w}
KAFKA_START_TIMEOUT=${KAFKA_START_TIMEOUT:-90}
CLICKHOUSE_START_TIMEOUT=${CLICKHOUSE_START_TIMEOUT:-30}
REDIS_START_TIMEOUT=${REDIS_START_TIMEOUT:-30}
ENGINES_INSTALL_COMPOSE=${ENGINES_INSTALL_COMPOSE:-1}
CLICKHOUSE_ANALYST_DATABASE=${CLICKHOUSE_ANALYST_DATABASE:-${CLICKHOUSE_DATABASE:-gateway}}

mkdir -p "$ENGINES_DIR"
ENGINES_DIR=$(cd "$ENGINES_DIR" && pwd)   # absolute: it is written into configs
KAFKA_LIBS=$ENGINES_DIR/cache/kafka-libs
KAFKA_DIR=$ENGINES_DIR/kafka
CH_DIR=$ENGINES_DIR/clickhouse
REDIS_DIR=$ENGINES_DIR/redis

for e in $ENGINES; do
  case $e in kafka|clickhouse|redis) ;; *) echo "engines: unknown engine '$e' in ENGINES" >&2; exit 2 ;; esac
done
selected() { [[ " $ENGINES " == *" $1 "* ]]; }
[[ "$CLICKHOUSE_ANALYST_DATABASE" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] ||
  { echo "engines: CLICKHOUSE_ANALYST_DATABASE=$CLICKHOUSE_ANALYST_DATABASE is not an identifier" >&2; exit 2; }
for v in CLICKHOUSE_ANALYST_MAX_RESULT_ROWS CLICKHOUSE_ANALYST_MAX_ROWS_TO_READ CLICKHOUSE_ANALYST_QUERIES_PER_HOUR \
  CLICKHOUSE_ANALYST_READ_ROWS_PER_HOUR; do
  [[ "${!v:-0}" =~ ^[0-9]+$ ]] || { echo "engines: $v=${!v} is not a whole number" >&2; exit 2; }
done
for v in KAFKA_PORT KAFKA_CONTROLLER_PORT CLICKHOUSE_HTTP_PORT CLICKHOUSE_TCP_PORT REDIS_PORT; do
  if ! [[ "${!v}" =~ ^[0-9]+$ ]] || [ "${!v}" -lt 1 ] || [ "${!v}" -gt 65535 ]; then
    echo "engines: $v=${!v} is not a valid port" >&2; exit 2
  fi
done

# ---------------------------------------------------------------- helpers
log() { printf '[engines] %s\n' "$*"; }
die() { printf '[engines] ERROR: %s\n' "$*" >&2; exit 1; }
now_us() { local t=${EPOCHREALTIME/[.,]/}; echo "$t"; }
since() { # since START_US -> "1.2s"
  local d=$(( $(now_us) - $1 ))
  printf '%d.%ds' $(( d / 1000000 )) $(( (d / 100000) % 10 ))
}
T_SCRIPT=$(now_us)

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"
  else die "need root (or sudo) to run: $*"; fi
}

port_open() { timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }
port_owner() {
  if command -v ss >/dev/null 2>&1; then
    ss -Hltnp "sport = :$1" 2>/dev/null | sed -n 's/.*users:(\(.*\))$/\1/p' | head -1
  fi
}
check_ports_free() { # name port...
  local name=$1 p; shift
  for p in "$@"; do
    if port_open "$p"; then
      die "$name: port 127.0.0.1:$p is already in use by another process ($(port_owner "$p")); stop it or choose another port"
    fi
  done
}

# pid of our engine process: from its pidfile if that process is alive and is
# COMM with an argument containing PATTERN; otherwise an orphan (pidfile lost)
# that matches the same way, adopted by rewriting the pidfile.
is_engine_proc() { # pid comm_prefix pattern
  local comm
  comm=$(cat 2>/dev/null "/proc/$1/comm") || return 1
  [[ "$comm" == "$2"* ]] && grep -qsaF -- "$3" "/proc/$1/cmdline"
}
find_pid() { # pidfile comm_prefix pattern
  local pidfile=$1 comm=$2 pattern=$3 pid f
  if [ -s "$pidfile" ]; then
    pid=$(tr -dc '0-9' <"$pidfile")
    if [ -n "$pid" ] && is_engine_proc "$pid" "$comm" "$pattern"; then echo "$pid"; return 0; fi
  fi
  # shellcheck disable=SC2013  # /proc paths have no spaces
  for f in $(grep -lsaF -- "$pattern" /proc/[0-9]*/cmdline 2>/dev/null); do
    pid=${f#/proc/}; pid=${pid%/cmdline}
    if is_engine_proc "$pid" "$comm" "$pattern"; then
      [ -d "$(dirname "$pidfile")" ] && echo "$pid" >"$pidfile"
      echo "$pid"; return 0
    fi
  done
  return 1
}

# start CMD... detached (own session, stdin closed), child writes its pid before exec
launch() { # pidfile logfile cmd...
  local pidfile=$1 logfile=$2 i; shift 2
  rm -f "$pidfile"
  # 9>&- : the child must not inherit the flock held on fd 9
  # shellcheck disable=SC2016  # $$ and $@ expand in the child shell
  setsid bash -c 'echo $$ >"$0"; exec "$@"' "$pidfile" "$@" </dev/null >>"$logfile" 2>&1 9>&- &
  for i in $(seq 50); do [ -s "$pidfile" ] && return 0; sleep 0.05; done
  die "could not launch: $*"
}

render() { # template output KEY=VALUE...
  local tpl=$1 out=$2 kv sedargs=(-e ""); shift 2
  for kv in "$@"; do sedargs+=(-e "s|@${kv%%=*}@|${kv#*=}|g"); done
  sed "${sedargs[@]}" "$tpl" >"$out.tmp" && mv -f "$out.tmp" "$out"
}

show_log() { # title file...
  local f
  for f in "${@:2}"; do
    [ -s "$f" ] || continue
    printf -- '----- %s: last 50 lines of %s -----\n' "$1" "$f" >&2
    tail -n 50 "$f" >&2
  done
  printf -- '----- end of %s log -----\n' "$1" >&2
}

stop_pid() { # name pid timeout_s [nudge_after_s nudge_cmd]: SIGTERM, once nudge_cmd after nudge_after_s, SIGKILL at timeout_s
  local name=$1 pid=$2 limit=$3 nudge_after=${4:-0} nudge=${5:-} t0 i
  t0=$(now_us)
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < limit * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || { log "$name: stopped pid $pid ($(since "$t0"))"; return 0; }
    if [ -n "$nudge" ] && [ "$i" -eq $((nudge_after * 10)) ]; then "$nudge" || true; fi
    sleep 0.1
  done
  log "$name: still running after ${limit}s, sending SIGKILL to $pid"
  kill -KILL "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  log "$name: killed pid $pid ($(since "$t0"))"
}

# ---------------------------------------------------------------- install
POLICY_RC=/usr/sbin/policy-rc.d
POLICY_CREATED=0
APT_UPDATED=0
cleanup() { if [ "$POLICY_CREATED" = 1 ]; then as_root rm -f "$POLICY_RC" || true; fi; }
trap cleanup EXIT

apt_install() { # packages...
  local t0 rc=0 aptlog=$ENGINES_DIR/apt.log
  t0=$(now_us)
  log "apt: installing $* ..."
  # packages must not start system services (system clickhouse/redis are never ours)
  if [ ! -e "$POLICY_RC" ]; then
    printf '#!/bin/sh\nexit 101\n' | as_root tee "$POLICY_RC" >/dev/null
    as_root chmod 755 "$POLICY_RC"; POLICY_CREATED=1
  fi
  {
    if [ "$APT_UPDATED" = 0 ]; then as_root apt-get update -qq && APT_UPDATED=1; fi &&
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "$@"
  } >"$aptlog" 2>&1 || rc=$?
  if [ "$POLICY_CREATED" = 1 ]; then as_root rm -f "$POLICY_RC"; POLICY_CREATED=0; fi
  if [ "$rc" != 0 ]; then show_log apt "$aptlog"; die "apt-get install $* failed (exit $rc)"; fi
  log "apt: installed $* ($(since "$t0"))"
}

ch_server_cmd() { # prints the server command (18.16 Debian: clickhouse-server; upstream: clickhouse server)
  local b
  for b in /usr/sbin/clickhouse-server /usr/bin/clickhouse-server; do [ -x "$b" ] && { echo "$b"; return 0; }; done
  b=$(command -v clickhouse-server 2>/dev/null) && { echo "$b"; return 0; }
  b=$(command -v clickhouse 2>/dev/null) && { echo "$b server"; return 0; }
  return 1
}

kafka_pom_sum() { sha256sum "$TPL_DIR/kafka/pom.xml" | cut -d' ' -f1; }
kafka_libs_complete() {
  [ -f "$KAFKA_LIBS/.complete" ] && [ "$(cat "$KAFKA_LIBS/.complete")" = "$(kafka_pom_sum)" ] &&
    compgen -G "$KAFKA_LIBS/kafka_2.13-*.jar" >/dev/null
}
compose_available() {
  command -v docker-compose >/dev/null 2>&1 && return 0
  command -v docker >/dev/null 2>&1 && docker compose version >/dev/null 2>&1
}

ensure_kafka_libs() {
  if kafka_libs_complete; then return 0; fi
  local t0 tmp mvnlog=$ENGINES_DIR/cache/mvn.log
  t0=$(now_us)
  mkdir -p "$ENGINES_DIR/cache"
  tmp=$KAFKA_LIBS.tmp.$$
  rm -rf "$tmp"
  log "kafka: downloading broker jars with Maven (pom: scripts/engines/kafka/pom.xml) ..."
  if ! mvn -q -B -Dstyle.color=never -f "$TPL_DIR/kafka/pom.xml" \
      dependency:copy-dependencies -DoutputDirectory="$tmp" >"$mvnlog" 2>&1; then
    rm -rf "$tmp"; show_log maven "$mvnlog"; die "kafka: mvn dependency:copy-dependencies failed"
  fi
  kafka_pom_sum >"$tmp/.complete"
  rm -rf "$KAFKA_LIBS"; mv "$tmp" "$KAFKA_LIBS"
  # shellcheck disable=SC2012
  log "kafka: $(ls "$KAFKA_LIBS"/*.jar | wc -l) jars in ${KAFKA_LIBS#"$REPO_ROOT"/} ($(since "$t0"))"
}

cmd_install() {
  local t0 pkgs=()
  t0=$(now_us)
  command -v curl >/dev/null 2>&1 || pkgs+=(curl)
  if selected kafka; then
    command -v java >/dev/null 2>&1 || pkgs+=(openjdk-17-jre-headless)
    kafka_libs_complete || command -v mvn >/dev/null 2>&1 || pkgs+=(maven)
  fi
  if selected clickhouse; then
    ch_server_cmd >/dev/null || pkgs+=(clickhouse-server)
    command -v clickhouse-client >/dev/null 2>&1 || pkgs+=(clickhouse-client)
  fi
  if selected redis; then
    command -v redis-server >/dev/null 2>&1 || pkgs+=(redis-server)
    command -v redis-cli >/dev/null 2>&1 || pkgs+=(redis-tools)
  fi
  if [ "$ENGINES_INSTALL_COMPOSE" = 1 ] && ! compose_available; then pkgs+=(docker-compose); fi
  # The OCR tests and bench render their table images with a TrueType font Debian ships.
  [ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || pkgs+=(fonts-dejavu-core)
  # The dashboard and paywall tests drive Debian's Chromium through playwright-core (no browser download).
  [ -x /usr/bin/chromium ] || pkgs+=(chromium)
  # The Python-client tests build venvs (test/helpers/python-venv.ts); Debian's python3 has no ensurepip without it.
  python3 -c 'import ensurepip' >/dev/null 2>&1 || pkgs+=(python3-venv)
  if [ ${#pkgs[@]} -gt 0 ]; then apt_install "${pkgs[@]}"; fi
  if selected clickhouse; then ch_server_cmd >/dev/null || die "clickhouse: no server binary after install"; fi
  if selected kafka; then ensure_kafka_libs; fi
  log "install: done ($(since "$t0"))"
}

# ---------------------------------------------------------------- kafka
KAFKA_JVM_TOOL_OPTS=(-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true)
kafka_run() { # CLASS ARGS... (tool JVM, quiet logging)
  java "${KAFKA_JVM_TOOL_OPTS[@]}" -Dlog4j.configuration="file:$TPL_DIR/kafka/tools-log4j.properties" \
    -cp "$KAFKA_LIBS/*" "$@"
}
kafka_pid() { find_pid "$KAFKA_DIR/kafka.pid" java "$KAFKA_DIR/server.properties"; }

# ApiVersions v0 request over /dev/tcp: a real Kafka protocol round trip, no JVM needed.
kafka_probe() {
  local out
  out=$(timeout 3 bash -c '
    exec 3<>/dev/tcp/127.0.0.1/'"$KAFKA_PORT"' || exit 1
    printf "\x00\x00\x00\x11\x00\x12\x00\x00\x00\x00\x00\x2a\x00\x07engines" >&3
    head -c 10 <&3 | od -An -tx1' 2>/dev/null | tr -d ' \n') || true
  # size(4) correlation_id=42 error_code=0
  [ "${out:8:12}" = "0000002a0000" ]
}
kafka_probe_full() { # list topics through the admin client from the jars
  timeout 60 java "${KAFKA_JVM_TOOL_OPTS[@]}" \
    -Dlog4j.configuration="file:$TPL_DIR/kafka/tools-log4j.properties" -cp "$KAFKA_LIBS/*" \
    org.apache.kafka.tools.TopicCommand --bootstrap-server "127.0.0.1:$KAFKA_PORT" --list \
    >"$KAFKA_DIR/probe.out" 2>&1
}

kafka_launch() {
  local t0 jopts
  check_ports_free kafka "$KAFKA_PORT" "$KAFKA_CONTROLLER_PORT"
  command -v java >/dev/null 2>&1 || die "kafka: java not found (run: scripts/engines.sh install)"
  kafka_libs_complete || die "kafka: jar cache incomplete (run: scripts/engines.sh install)"
  mkdir -p "$KAFKA_DIR/data" "$KAFKA_DIR/logs"
  render "$TPL_DIR/kafka/server.properties.template" "$KAFKA_DIR/server.properties" \
    "KAFKA_PORT=$KAFKA_PORT" "KAFKA_CONTROLLER_PORT=$KAFKA_CONTROLLER_PORT" "KAFKA_DATA_DIR=$KAFKA_DIR/data"
  if [ -f "$KAFKA_DIR/data/meta.properties" ]; then
    log "kafka: reusing formatted log dir (cluster $(sed -n 's/^cluster.id=//p' "$KAFKA_DIR/data/meta.properties"))"
  else
    t0=$(now_us)
    if ! kafka_run kafka.tools.StorageTool format -t "$KAFKA_CLUSTER_ID" \
        -c "$KAFKA_DIR/server.properties" >"$KAFKA_DIR/format.log" 2>&1; then
      show_log kafka-format "$KAFKA_DIR/format.log"; die "kafka: storage format failed"
    fi
    log "kafka: formatted log dir, cluster $KAFKA_CLUSTER_ID ($(since "$t0"))"
  fi
  [ -f "$KAFKA_DIR/kafka.log" ] && mv -f "$KAFKA_DIR/kafka.log" "$KAFKA_DIR/kafka.log.1"
  # shellcheck disable=SC2206
  jopts=($KAFKA_HEAP_OPTS -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35
    -XX:+ExplicitGCInvokesConcurrent -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true
    "-Dlog4j.configuration=file:$TPL_DIR/kafka/log4j.properties" "-Dkafka.logs.dir=$KAFKA_DIR/logs")
  launch "$KAFKA_DIR/kafka.pid" "$KAFKA_DIR/kafka.log" \
    java "${jopts[@]}" -cp "$KAFKA_LIBS/*" kafka.Kafka "$KAFKA_DIR/server.properties"
}

# ---------------------------------------------------------------- clickhouse
ch_pid() { find_pid "$CH_DIR/clickhouse.pid" clickhouse "--config-file=$CH_DIR/config.xml"; }
ch_probe() {
  [ "$(curl -s --max-time 3 "http://127.0.0.1:$CLICKHOUSE_HTTP_PORT/?query=SELECT%201" 2>/dev/null)" = 1 ]
}
# ClickHouse 18.16 keeps serving requests on open keep-alive connections after SIGTERM and waits for
# them before shutting its tables down: a client inserting without pause held a stop for 15-30 s. Once
# its own wait (shutdown_wait_unfinished, 3 s) is over, the connections still open on its ports are
# closed (ss -K: the kernel destroys the sockets); clients see a reset and retry elsewhere or later,
# the server shuts its tables down normally (no SIGKILL, nothing acknowledged is lost).
ch_close_client_connections() {
  local filter n
  command -v ss >/dev/null 2>&1 || return 0
  filter="( sport = :$CLICKHOUSE_HTTP_PORT or sport = :$CLICKHOUSE_TCP_PORT )"
  n=$(ss -Htn state established "$filter" 2>/dev/null | wc -l)
  [ "$n" -gt 0 ] || return 0
  if as_root ss -K -Htn state established "$filter" >/dev/null 2>&1; then
    log "clickhouse: closed $n client connection(s) still open after SIGTERM"
  else
    log "clickhouse: could not close $n client connection(s) still open (ss -K); waiting for them"
  fi
}
# The analyst's password (printed without a newline): CLICKHOUSE_ANALYST_PASSWORD, else the one kept in
# $CH_DIR/analyst.password, else a new random one written there (mode 0600) for the analyst to read.
ch_analyst_password() {
  local f=$CH_DIR/analyst.password
  if [ -n "${CLICKHOUSE_ANALYST_PASSWORD:-}" ]; then printf '%s' "$CLICKHOUSE_ANALYST_PASSWORD"; return 0; fi
  if [ ! -s "$f" ]; then
    (umask 077 && head -c 24 /dev/urandom | base64 | tr -d '/+=\n' >"$f.tmp" && mv -f "$f.tmp" "$f")
    log "clickhouse: analyst password generated in $f" >&2
  fi
  tr -d '\n' <"$f"
}
# The production definition of the analyst (users.d/analyst.xml) for this server, next to its users.xml: the
# password's SHA-256 written in (18.16 has no from_env), its database, loopback networks, and the limits set in the
# environment in place of the file's.
ch_render_analyst() { # output
  local out=$1 hash sedargs=() kv
  hash=$(ch_analyst_password | sha256sum | cut -d' ' -f1)
  sedargs+=(-e "s|<password_sha256_hex from_env=\"CLICKHOUSE_ANALYST_PASSWORD_SHA256\"/>|<password_sha256_hex>$hash</password_sha256_hex>|"
    -e "s|<database>gateway</database>|<database>$CLICKHOUSE_ANALYST_DATABASE</database>|"
    -e 's|<ip>::/0</ip>|<ip>::1</ip><ip>127.0.0.1</ip>|')
  for kv in "max_result_rows=${CLICKHOUSE_ANALYST_MAX_RESULT_ROWS:-}" "max_rows_to_read=${CLICKHOUSE_ANALYST_MAX_ROWS_TO_READ:-}" \
    "queries=${CLICKHOUSE_ANALYST_QUERIES_PER_HOUR:-}" "read_rows=${CLICKHOUSE_ANALYST_READ_ROWS_PER_HOUR:-}"; do
    if [ -n "${kv#*=}" ]; then sedargs+=(-e "s|<${kv%%=*}>[0-9]*</|<${kv%%=*}>${kv#*=}</|"); fi
  done
  (umask 077 && sed "${sedargs[@]}" "$TPL_DIR/clickhouse/users.d/analyst.xml" >"$out.tmp")
  grep -q "<password_sha256_hex>$hash<" "$out.tmp" ||
    die "clickhouse: no <password_sha256_hex from_env=\"CLICKHOUSE_ANALYST_PASSWORD_SHA256\"/> in users.d/analyst.xml"
  mv -f "$out.tmp" "$out"
}
ch_launch() {
  local cmd
  check_ports_free clickhouse "$CLICKHOUSE_HTTP_PORT" "$CLICKHOUSE_TCP_PORT"
  cmd=$(ch_server_cmd) || die "clickhouse: server binary not found (run: scripts/engines.sh install)"
  mkdir -p "$CH_DIR/data" "$CH_DIR/tmp" "$CH_DIR/log" "$CH_DIR/user_files" "$CH_DIR/format_schemas"
  render "$TPL_DIR/clickhouse/config.xml.template" "$CH_DIR/config.xml" "CH_DIR=$CH_DIR" \
    "CLICKHOUSE_HTTP_PORT=$CLICKHOUSE_HTTP_PORT" "CLICKHOUSE_TCP_PORT=$CLICKHOUSE_TCP_PORT"
  render "$TPL_DIR/clickhouse/users.xml.template" "$CH_DIR/users.xml"
  mkdir -p "$CH_DIR/users.d"
  ch_render_analyst "$CH_DIR/users.d/analyst.xml"
  [ -f "$CH_DIR/clickhouse.out" ] && mv -f "$CH_DIR/clickhouse.out" "$CH_DIR/clickhouse.out.1"
  # shellcheck disable=SC2086
  (cd "$CH_DIR" && launch "$CH_DIR/clickhouse.pid" "$CH_DIR/clickhouse.out" $cmd "--config-file=$CH_DIR/config.xml")
}

# ---------------------------------------------------------------- redis
redis_pid() { # redis rewrites its argv to "redis-server 127.0.0.1:PORT": also check its data dir
  local pid
  pid=$(find_pid "$REDIS_DIR/redis.pid" redis-server "redis-server 127.0.0.1:$REDIS_PORT") || return 1
  if [ "$(timeout 3 redis-cli -h 127.0.0.1 -p "$REDIS_PORT" --raw CONFIG GET dir 2>/dev/null | sed -n 2p)" = "$REDIS_DIR/data" ] ||
     ! redis_probe; then echo "$pid"; return 0; fi
  return 1
}
redis_probe() {
  [ "$(timeout 3 redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ]
}
redis_launch() {
  local i
  check_ports_free redis "$REDIS_PORT"
  command -v redis-server >/dev/null 2>&1 || die "redis: redis-server not found (run: scripts/engines.sh install)"
  mkdir -p "$REDIS_DIR/data"
  render "$TPL_DIR/redis/redis.conf.template" "$REDIS_DIR/redis.conf" \
    "REDIS_PORT=$REDIS_PORT" "REDIS_DIR=$REDIS_DIR"
  rm -f "$REDIS_DIR/redis.pid"
  if ! redis-server "$REDIS_DIR/redis.conf" </dev/null >"$REDIS_DIR/redis.out" 2>&1 9>&-; then
    show_log redis "$REDIS_DIR/redis.out" "$REDIS_DIR/redis.log"; die "redis: redis-server failed to start"
  fi
  for i in $(seq 100); do [ -s "$REDIS_DIR/redis.pid" ] && return 0; sleep 0.05; done
  show_log redis "$REDIS_DIR/redis.out" "$REDIS_DIR/redis.log"; die "redis: no pid file written"
}

# ---------------------------------------------------------------- dispatch per engine
engine_pid() { case $1 in kafka) kafka_pid ;; clickhouse) ch_pid ;; redis) redis_pid ;; esac; }
engine_probe() { case $1 in kafka) kafka_probe ;; clickhouse) ch_probe ;; redis) redis_probe ;; esac; }
engine_launch() { case $1 in kafka) kafka_launch ;; clickhouse) ch_launch ;; redis) redis_launch ;; esac; }
engine_ports() {
  case $1 in
    kafka) echo "$KAFKA_PORT (controller $KAFKA_CONTROLLER_PORT)" ;;
    clickhouse) echo "$CLICKHOUSE_HTTP_PORT (http), $CLICKHOUSE_TCP_PORT (native)" ;;
    redis) echo "$REDIS_PORT" ;;
  esac
}
engine_timeout() {
  case $1 in kafka) echo "$KAFKA_START_TIMEOUT" ;; clickhouse) echo "$CLICKHOUSE_START_TIMEOUT" ;; redis) echo "$REDIS_START_TIMEOUT" ;; esac
}
engine_logs() {
  case $1 in
    kafka) echo "$KAFKA_DIR/kafka.log" ;;
    clickhouse) echo "$CH_DIR/clickhouse.out $CH_DIR/log/clickhouse-server.log $CH_DIR/log/clickhouse-server.err.log" ;;
    redis) echo "$REDIS_DIR/redis.out $REDIS_DIR/redis.log" ;;
  esac
}
engine_pidfile() {
  case $1 in kafka) echo "$KAFKA_DIR/kafka.pid" ;; clickhouse) echo "$CH_DIR/clickhouse.pid" ;; redis) echo "$REDIS_DIR/redis.pid" ;; esac
}
engine_stop_timeout() { case $1 in kafka) echo 30 ;; clickhouse) echo 30 ;; redis) echo 15 ;; esac; }

lock() {
  exec 9>"$ENGINES_DIR/.lock"
  flock -w 600 9 || die "another scripts/engines.sh is still running (lock $ENGINES_DIR/.lock)"
}

cmd_up() {
  local e pid t0 waited limit failed=() ordered=() pending=() still=()
  declare -A started_at=() fresh=()
  lock
  cmd_install
  # launch order: fast ones first so they boot while the Kafka JVM formats/starts
  for e in redis clickhouse kafka; do selected "$e" && ordered+=("$e"); done
  for e in "${ordered[@]}"; do
    if pid=$(engine_pid "$e"); then
      started_at[$e]=$(now_us)
    else
      rm -f "$(engine_pidfile "$e")"
      t0=$(now_us)
      engine_launch "$e"
      started_at[$e]=$t0; fresh[$e]=1
    fi
  done
  # poll all engines together until each answers a real request, dies, or times out
  pending=("${ordered[@]}")
  while [ ${#pending[@]} -gt 0 ]; do
    still=()
    for e in "${pending[@]}"; do
      if engine_probe "$e"; then
        pid=$(engine_pid "$e") || pid='?'
        if [ -z "${fresh[$e]:-}" ]; then
          log "$e: already running, pid $pid, port $(engine_ports "$e")"
        elif [ "$e" = kafka ] && ! kafka_probe_full; then
          log "kafka: TopicCommand --list failed"
          show_log kafka "$KAFKA_DIR/probe.out" "$KAFKA_DIR/kafka.log"; failed+=(kafka)
        else
          log "$e: up, pid $pid, port $(engine_ports "$e") ($(since "${started_at[$e]}"))"
        fi
        continue
      fi
      limit=$(engine_timeout "$e")
      waited=$(( ($(now_us) - started_at[$e]) / 1000000 ))
      if ! pid=$(engine_pid "$e"); then
        log "$e: process exited during startup"
      elif [ "$waited" -ge "$limit" ]; then
        log "$e: no answer on port $(engine_ports "$e") within ${limit}s (pid $pid)"
      else
        still+=("$e"); continue
      fi
      # shellcheck disable=SC2046
      show_log "$e" $(engine_logs "$e"); failed+=("$e")
      # do not leave a half-started process behind: the next `up` starts afresh
      if [ -n "${fresh[$e]:-}" ] && pid=$(engine_pid "$e"); then stop_pid "$e" "$pid" 10; fi
    done
    pending=("${still[@]}")
    [ ${#pending[@]} -gt 0 ] && sleep 0.2
  done
  if [ ${#failed[@]} -gt 0 ]; then die "failed to start: ${failed[*]} (logs under $ENGINES_DIR)"; fi
  log "up: all of [$ENGINES] running ($(since "$T_SCRIPT"))"
}

cmd_down() {
  local e pid purge=0
  case "${1:-}" in --purge) purge=1 ;; "") ;; *) die "usage: down [--purge]" ;; esac
  lock
  for e in kafka clickhouse redis; do
    selected "$e" || continue
    if pid=$(engine_pid "$e"); then
      if [ "$e" = clickhouse ]; then stop_pid "$e" "$pid" "$(engine_stop_timeout "$e")" 3 ch_close_client_connections
      else stop_pid "$e" "$pid" "$(engine_stop_timeout "$e")"; fi
    else
      log "$e: not running"
    fi
    rm -f "$(engine_pidfile "$e")"
    if [ "$purge" = 1 ]; then
      case $e in kafka) rm -rf "$KAFKA_DIR" ;; clickhouse) rm -rf "$CH_DIR" ;; redis) rm -rf "$REDIS_DIR" ;; esac
      log "$e: data purged"
    fi
  done
  log "down: done ($(since "$T_SCRIPT"))"
}

cmd_status() {
  local e pid state probe rc=0
  for e in kafka clickhouse redis; do
    selected "$e" || continue
    if pid=$(engine_pid "$e"); then state=running; else state=stopped; pid=-; fi
    if engine_probe "$e"; then
      case $e in kafka) probe="ok (ApiVersions)" ;; clickhouse) probe="ok (SELECT 1)" ;; redis) probe="ok (PONG)" ;; esac
    else probe=fail; fi
    [ "$state" = running ] && [ "$probe" != fail ] || rc=1
    printf '%-10s %-8s pid=%-8s port=%-32s probe=%s\n' "$e" "$state" "$pid" "$(engine_ports "$e")" "$probe"
    if [ "$e" = clickhouse ] && [ -z "${CLICKHOUSE_ANALYST_PASSWORD:-}" ] && [ -s "$CH_DIR/analyst.password" ]; then
      printf '%-10s analyst password in %s\n' '' "$CH_DIR/analyst.password"
    fi
  done
  return $rc
}

usage() { sed -n '2,25p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

case ${ENGINES_TOPOLOGY:-single} in
  single) ;;
  replicated) # built from the helpers above; the single node's commands below are not reached
    # shellcheck source=engines/replicated/topology.sh
    source "$TPL_DIR/replicated/topology.sh"
    replicated_main "$@"
    exit $? ;;
  *) die "ENGINES_TOPOLOGY=$ENGINES_TOPOLOGY: single or replicated" ;;
esac

case "${1:-}" in
  install) lock; cmd_install ;;
  up) cmd_up ;;
  down) shift; cmd_down "$@" ;;
  status) cmd_status ;;
  kafka-run) shift; [ $# -ge 1 ] || die "usage: kafka-run CLASS [ARGS...]"
    kafka_libs_complete || die "kafka: jar cache incomplete (run: scripts/engines.sh install)"
    kafka_run "$@" ;;
  -h|--help|help) usage ;;
  *) usage >&2; exit 2 ;;
esac
