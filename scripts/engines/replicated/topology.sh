# shellcheck shell=bash
# The replicated topology of scripts/engines.sh (ENGINES_TOPOLOGY=replicated): sourced by it, after its helpers
# (launch, find_pid, stop_pid, render, kafka_run, kafka_probe, ch_server_cmd, cmd_install ...), never run alone.
#
#   zookeeper            one standalone Apache ZooKeeper 3.8 (Maven Central jars) coordinating the ClickHouse replicas
#   kafka-1..3           three Apache Kafka KRaft nodes, each broker and controller (a 3-voter quorum survives one loss)
#   clickhouse-1..2      two ClickHouse 18.16 replicas of one shard, cluster "gateway" (remote_servers + macros)
#   redis-1, redis-2     Redis primary and replica (Sentinel moves the primary role)
#   sentinel-1..3        three Redis Sentinels (redis-server --sentinel), master name "gateway", quorum 2
#
# All on 127.0.0.1, state under $ENGINES_DIR/replicated (default .engines/replicated), ports from 21000 up (clear of
# the single node's 19092/19093, 18123/19000, 16379, CI's 29092/29093, 28123/29000, 26379, and below the kernel's
# ephemeral range). `up` is idempotent and returns once the cluster is usable: 3 brokers registered; both replicas in
# system.clusters and a row written through a ReplicatedReplacingMergeTree table created ON CLUSTER on one replica
# read back on the other; the 3 Sentinels agreeing on the primary, which has its replica. See docs/replicated-topology.md.
#
# Environment (defaults): REPL_KAFKA_PORTS="21092 21093 21094" REPL_KAFKA_CONTROLLER_PORTS="21192 21193 21194"
#   REPL_ZOOKEEPER_PORT=21181 REPL_CLICKHOUSE_HTTP_PORTS="21123 21124" REPL_CLICKHOUSE_TCP_PORTS="21001 21002"
#   REPL_CLICKHOUSE_INTERSERVER_PORTS="21009 21010" REPL_REDIS_PORTS="21379 21380" REPL_SENTINEL_PORTS="21479 21480 21481"
#   REPL_KAFKA_HEAP_OPTS="-Xmx512m -Xms256m" REPL_ZOOKEEPER_HEAP_OPTS="-Xmx256m -Xms64m" REPL_START_TIMEOUT=180
#   REPL_CLICKHOUSE_CLUSTER=gateway REPL_REDIS_MASTER_NAME=gateway

REPL_DIR=$ENGINES_DIR/replicated
REPL_TPL=$TPL_DIR/replicated
read -r -a REPL_KAFKA_PORT <<<"${REPL_KAFKA_PORTS:-21092 21093 21094}"
read -r -a REPL_KAFKA_CONTROLLER_PORT <<<"${REPL_KAFKA_CONTROLLER_PORTS:-21192 21193 21194}"
REPL_ZOOKEEPER_PORT=${REPL_ZOOKEEPER_PORT:-21181}
read -r -a REPL_CH_HTTP_PORT <<<"${REPL_CLICKHOUSE_HTTP_PORTS:-21123 21124}"
read -r -a REPL_CH_TCP_PORT <<<"${REPL_CLICKHOUSE_TCP_PORTS:-21001 21002}"
read -r -a REPL_CH_INTERSERVER_PORT <<<"${REPL_CLICKHOUSE_INTERSERVER_PORTS:-21009 21010}"
read -r -a REPL_REDIS_PORT <<<"${REPL_REDIS_PORTS:-21379 21380}"
read -r -a REPL_SENTINEL_PORT <<<"${REPL_SENTINEL_PORTS:-21479 21480 21481}"
REPL_KAFKA_HEAP_OPTS=${REPL_KAFKA_HEAP_OPTS:--Xmx512m -Xms256m}
REPL_ZOOKEEPER_HEAP_OPTS=${REPL_ZOOKEEPER_HEAP_OPTS:--Xmx256m -Xms64m}
REPL_START_TIMEOUT=${REPL_START_TIMEOUT:-180}
REPL_CLICKHOUSE_CLUSTER=${REPL_CLICKHOUSE_CLUSTER:-gateway}
REPL_REDIS_MASTER_NAME=${REPL_REDIS_MASTER_NAME:-gateway}
# Fixed KRaft cluster id of the three nodes (not the single node's): only used when a log dir is formatted.
REPL_KAFKA_CLUSTER_ID=${REPL_KAFKA_CLUSTER_ID:-Rk3nQ2xvT0mWc8pLd5sHfA}
ZOOKEEPER_LIBS=$ENGINES_DIR/cache/zookeeper-libs

[ ${#REPL_KAFKA_PORT[@]} = 3 ] && [ ${#REPL_KAFKA_CONTROLLER_PORT[@]} = 3 ] || die "REPL_KAFKA_PORTS and REPL_KAFKA_CONTROLLER_PORTS need 3 ports each"
[ ${#REPL_CH_HTTP_PORT[@]} = 2 ] && [ ${#REPL_CH_TCP_PORT[@]} = 2 ] && [ ${#REPL_CH_INTERSERVER_PORT[@]} = 2 ] ||
  die "REPL_CLICKHOUSE_{HTTP,TCP,INTERSERVER}_PORTS need 2 ports each"
[ ${#REPL_REDIS_PORT[@]} = 2 ] && [ ${#REPL_SENTINEL_PORT[@]} = 3 ] || die "REPL_REDIS_PORTS needs 2 ports, REPL_SENTINEL_PORTS 3"
for p in "${REPL_KAFKA_PORT[@]}" "${REPL_KAFKA_CONTROLLER_PORT[@]}" "$REPL_ZOOKEEPER_PORT" "${REPL_CH_HTTP_PORT[@]}" \
  "${REPL_CH_TCP_PORT[@]}" "${REPL_CH_INTERSERVER_PORT[@]}" "${REPL_REDIS_PORT[@]}" "${REPL_SENTINEL_PORT[@]}"; do
  if ! [[ "$p" =~ ^[0-9]+$ ]] || [ "$p" -lt 1 ] || [ "$p" -gt 65535 ]; then die "replicated: $p is not a valid port"; fi
done
[[ "$REPL_CLICKHOUSE_CLUSTER" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || die "REPL_CLICKHOUSE_CLUSTER must be an identifier"
[[ "$REPL_REDIS_MASTER_NAME" =~ ^[A-Za-z0-9_.-]+$ ]] || die "REPL_REDIS_MASTER_NAME: letters, digits, . _ - only"

# Every process of the topology, in launch order (fast ones first, ZooKeeper before the ClickHouse replicas).
REPL_PROCS=(zookeeper redis-1 redis-2 sentinel-1 sentinel-2 sentinel-3 clickhouse-1 clickhouse-2 kafka-1 kafka-2 kafka-3)

proc_kind() { echo "${1%-[0-9]}"; }
proc_index() { [[ "$1" == *-[0-9] ]] && echo "${1##*-}" || echo 1; }   # 1-based
proc_dir() { echo "$REPL_DIR/$1"; }
proc_pidfile() {
  case $(proc_kind "$1") in
    zookeeper | kafka | clickhouse) echo "$REPL_DIR/$1/$(proc_kind "$1").pid" ;;
    redis) echo "$REPL_DIR/$1/redis.pid" ;;
    sentinel) echo "$REPL_DIR/$1/sentinel.pid" ;;
  esac
}
proc_port() { # the client port
  local i
  i=$(($(proc_index "$1") - 1))
  case $(proc_kind "$1") in
    zookeeper) echo "$REPL_ZOOKEEPER_PORT" ;;
    kafka) echo "${REPL_KAFKA_PORT[$i]}" ;;
    clickhouse) echo "${REPL_CH_HTTP_PORT[$i]}" ;;
    redis) echo "${REPL_REDIS_PORT[$i]}" ;;
    sentinel) echo "${REPL_SENTINEL_PORT[$i]}" ;;
  esac
}
proc_all_ports() { # every port the process listens on
  local i
  i=$(($(proc_index "$1") - 1))
  case $(proc_kind "$1") in
    kafka) echo "${REPL_KAFKA_PORT[$i]} ${REPL_KAFKA_CONTROLLER_PORT[$i]}" ;;
    clickhouse) echo "${REPL_CH_HTTP_PORT[$i]} ${REPL_CH_TCP_PORT[$i]} ${REPL_CH_INTERSERVER_PORT[$i]}" ;;
    *) proc_port "$1" ;;
  esac
}
proc_ports_label() {
  local i
  i=$(($(proc_index "$1") - 1))
  case $(proc_kind "$1") in
    kafka) echo "${REPL_KAFKA_PORT[$i]} (controller ${REPL_KAFKA_CONTROLLER_PORT[$i]})" ;;
    clickhouse) echo "${REPL_CH_HTTP_PORT[$i]} (http), ${REPL_CH_TCP_PORT[$i]} (native), ${REPL_CH_INTERSERVER_PORT[$i]} (interserver)" ;;
    *) proc_port "$1" ;;
  esac
}
proc_logs() {
  local d
  d=$(proc_dir "$1")
  case $(proc_kind "$1") in
    zookeeper) echo "$d/zookeeper.log" ;;
    kafka) echo "$d/kafka.log" ;;
    clickhouse) echo "$d/clickhouse.out $d/log/clickhouse-server.err.log" ;;
    redis) echo "$d/redis.out $d/redis.log" ;;
    sentinel) echo "$d/sentinel.out $d/sentinel.log" ;;
  esac
}
proc_pid() {
  local d
  d=$(proc_dir "$1")
  case $(proc_kind "$1") in
    zookeeper) find_pid "$(proc_pidfile "$1")" java "$d/zoo.cfg" ;;
    kafka) find_pid "$(proc_pidfile "$1")" java "$d/server.properties" ;;
    clickhouse) find_pid "$(proc_pidfile "$1")" clickhouse "--config-file=$d/config.xml" ;;
    # Redis rewrites its argv to "redis-server 127.0.0.1:PORT" (Sentinel adds " [sentinel]"); the port is ours alone.
    redis | sentinel) find_pid "$(proc_pidfile "$1")" redis-server "127.0.0.1:$(proc_port "$1")" ;;
  esac
}
redis_cli() { timeout 3 redis-cli -h 127.0.0.1 -p "$@" 2>/dev/null; }
proc_probe() { # one real request
  local port
  port=$(proc_port "$1")
  case $(proc_kind "$1") in
    # srvr, not ruok: ruok answers imok even when the server failed to start serving
    zookeeper) timeout 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port && printf srvr >&3 && cat <&3" 2>/dev/null | grep -q '^Mode: ' ;;
    kafka) KAFKA_PORT=$port kafka_probe ;;
    clickhouse) [ "$(curl -s --max-time 3 "http://127.0.0.1:$port/?query=SELECT%201" 2>/dev/null)" = 1 ] ;;
    redis | sentinel) [ "$(redis_cli "$port" ping)" = PONG ] ;;
  esac
}
proc_probe_label() {
  case $(proc_kind "$1") in
    zookeeper) echo "ok (srvr: serving)" ;;
    kafka) echo "ok (ApiVersions)" ;;
    clickhouse) echo "ok (SELECT 1)" ;;
    redis) echo "ok (PONG, $(redis_cli "$(proc_port "$1")" --raw info replication | tr -d '\r' | sed -n 's/^role://p'))" ;;
    sentinel) echo "ok (PONG)" ;;
  esac
}
proc_rss() { # resident memory of the process, "123 MB"
  local kb
  kb=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status" 2>/dev/null) || true
  [ -n "$kb" ] && echo "$((kb / 1024)) MB" || echo "-"
}

# ---------------------------------------------------------------- launch, one per kind
zookeeper_launch() {
  local d=$REPL_DIR/zookeeper jopts
  mkdir -p "$d/data"
  render "$REPL_TPL/zookeeper/zoo.cfg.template" "$d/zoo.cfg" "ZK_DIR=$d" "ZOOKEEPER_PORT=$REPL_ZOOKEEPER_PORT"
  [ -f "$d/zookeeper.log" ] && mv -f "$d/zookeeper.log" "$d/zookeeper.log.1"
  # shellcheck disable=SC2206
  jopts=($REPL_ZOOKEEPER_HEAP_OPTS -XX:+UseSerialGC -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true
    "-Dlog4j.configuration=file:$REPL_TPL/zookeeper/log4j.properties" -Dzookeeper.jmx.log4j.disable=true)
  launch "$d/zookeeper.pid" "$d/zookeeper.log" \
    java "${jopts[@]}" -cp "$ZOOKEEPER_LIBS/*" org.apache.zookeeper.server.ZooKeeperServerMain "$d/zoo.cfg"
}

kafka_node_launch() { # name
  local d i voters="" n jopts t0
  d=$(proc_dir "$1"); i=$(proc_index "$1")
  for n in 1 2 3; do voters+="${voters:+,}$n@127.0.0.1:${REPL_KAFKA_CONTROLLER_PORT[$((n - 1))]}"; done
  mkdir -p "$d/data" "$d/logs"
  render "$REPL_TPL/kafka/server.properties.template" "$d/server.properties" "NODE_ID=$i" "VOTERS=$voters" \
    "KAFKA_PORT=${REPL_KAFKA_PORT[$((i - 1))]}" "KAFKA_CONTROLLER_PORT=${REPL_KAFKA_CONTROLLER_PORT[$((i - 1))]}" \
    "KAFKA_DATA_DIR=$d/data"
  if [ ! -f "$d/data/meta.properties" ]; then
    t0=$(now_us)
    if ! kafka_run kafka.tools.StorageTool format -t "$REPL_KAFKA_CLUSTER_ID" -c "$d/server.properties" \
        >"$d/format.log" 2>&1; then
      show_log "$1-format" "$d/format.log"; die "$1: storage format failed"
    fi
    log "$1: formatted log dir, cluster $REPL_KAFKA_CLUSTER_ID ($(since "$t0"))"
  fi
  [ -f "$d/kafka.log" ] && mv -f "$d/kafka.log" "$d/kafka.log.1"
  # shellcheck disable=SC2206
  jopts=($REPL_KAFKA_HEAP_OPTS -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35
    -XX:+ExplicitGCInvokesConcurrent -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true
    "-Dlog4j.configuration=file:$TPL_DIR/kafka/log4j.properties" "-Dkafka.logs.dir=$d/logs")
  launch "$d/kafka.pid" "$d/kafka.log" java "${jopts[@]}" -cp "$KAFKA_LIBS/*" kafka.Kafka "$d/server.properties"
}

clickhouse_replica_launch() { # name
  local d i cmd replicas="" n
  d=$(proc_dir "$1"); i=$(proc_index "$1")
  cmd=$(ch_server_cmd) || die "clickhouse: server binary not found (run: scripts/engines.sh install)"
  for n in 0 1; do replicas+="<replica><host>127.0.0.1</host><port>${REPL_CH_TCP_PORT[$n]}</port></replica>"; done
  mkdir -p "$d/data" "$d/tmp" "$d/log" "$d/user_files" "$d/format_schemas"
  render "$REPL_TPL/clickhouse/config.xml.template" "$d/config.xml" "CH_DIR=$d" "REPLICA=r$i" \
    "CLUSTER=$REPL_CLICKHOUSE_CLUSTER" "REPLICAS=$replicas" "ZOOKEEPER_PORT=$REPL_ZOOKEEPER_PORT" \
    "HTTP_PORT=${REPL_CH_HTTP_PORT[$((i - 1))]}" "TCP_PORT=${REPL_CH_TCP_PORT[$((i - 1))]}" \
    "INTERSERVER_PORT=${REPL_CH_INTERSERVER_PORT[$((i - 1))]}"
  render "$TPL_DIR/clickhouse/users.xml.template" "$d/users.xml"
  [ -f "$d/clickhouse.out" ] && mv -f "$d/clickhouse.out" "$d/clickhouse.out.1"
  # shellcheck disable=SC2086
  (cd "$d" && launch "$d/clickhouse.pid" "$d/clickhouse.out" $cmd "--config-file=$d/config.xml")
}

# host:port of the primary as a running Sentinel names it, else the running data node that says it is a primary.
redis_current_master() {
  local p addr
  for p in "${REPL_SENTINEL_PORT[@]}"; do
    addr=$(redis_cli "$p" --raw SENTINEL get-master-addr-by-name "$REPL_REDIS_MASTER_NAME" | tr '\n' ':')
    [[ "$addr" =~ ^[0-9.]+:[0-9]+:$ ]] && { echo "${addr%:}"; return 0; }
  done
  for p in "${REPL_REDIS_PORT[@]}"; do
    redis_cli "$p" --raw info replication | grep -q '^role:master' && { echo "127.0.0.1:$p"; return 0; }
  done
  return 1
}
redis_node_launch() { # name
  local d i port master replicaof="" j
  d=$(proc_dir "$1"); i=$(proc_index "$1"); port=$(proc_port "$1")
  command -v redis-server >/dev/null 2>&1 || die "redis: redis-server not found (run: scripts/engines.sh install)"
  # A node joins as the replica of the current primary; with none known, redis-1 is the primary.
  if master=$(redis_current_master) && [ "$master" != "127.0.0.1:$port" ]; then replicaof="replicaof ${master/:/ }"
  elif [ "$i" != 1 ] && [ -z "${master:-}" ]; then replicaof="replicaof 127.0.0.1 ${REPL_REDIS_PORT[0]}"; fi
  mkdir -p "$d/data"
  render "$REPL_TPL/redis/redis.conf.template" "$d/redis.conf" "REDIS_PORT=$port" "REDIS_DIR=$d" "REPLICAOF=$replicaof"
  rm -f "$d/redis.pid"
  redis-server "$d/redis.conf" </dev/null >"$d/redis.out" 2>&1 9>&- || { show_log "$1" "$d/redis.out" "$d/redis.log"; die "$1: redis-server failed to start"; }
  for j in $(seq 100); do [ -s "$d/redis.pid" ] && return 0; sleep 0.05; done
  show_log "$1" "$d/redis.out" "$d/redis.log"; die "$1: no pid file written"
}
sentinel_launch() { # name
  local d port master j
  d=$(proc_dir "$1"); port=$(proc_port "$1")
  mkdir -p "$d"
  # Sentinel rewrites its file with its id and what it learned: kept across restarts while the topology runs (a new
  # id would count as a fourth Sentinel in the others' majority), written afresh on a cold start (cmd_up).
  if [ ! -s "$d/sentinel.conf" ]; then
    master=$(redis_current_master) || master=127.0.0.1:${REPL_REDIS_PORT[0]}
    render "$REPL_TPL/redis/sentinel.conf.template" "$d/sentinel.conf" "SENTINEL_PORT=$port" "SENTINEL_DIR=$d" \
      "MASTER_NAME=$REPL_REDIS_MASTER_NAME" "MASTER_PORT=${master##*:}"
  fi
  rm -f "$d/sentinel.pid"
  redis-server "$d/sentinel.conf" --sentinel </dev/null >"$d/sentinel.out" 2>&1 9>&- || { show_log "$1" "$d/sentinel.out" "$d/sentinel.log"; die "$1: sentinel failed to start"; }
  for j in $(seq 100); do [ -s "$d/sentinel.pid" ] && return 0; sleep 0.05; done
  show_log "$1" "$d/sentinel.out" "$d/sentinel.log"; die "$1: no pid file written"
}

proc_launch() { # name
  local p
  for p in $(proc_all_ports "$1"); do check_ports_free "$1" "$p"; done
  case $(proc_kind "$1") in
    zookeeper) zookeeper_launch ;;
    kafka) kafka_node_launch "$1" ;;
    clickhouse) clickhouse_replica_launch "$1" ;;
    redis) redis_node_launch "$1" ;;
    sentinel) sentinel_launch "$1" ;;
  esac
}

# ---------------------------------------------------------------- cluster-level checks
# Brokers the cluster's metadata lists, as the Kafka admin tool sees them from one bootstrap.
kafka_registered_brokers() {
  local out
  out=$(timeout 60 java "${KAFKA_JVM_TOOL_OPTS[@]}" -Dlog4j.configuration="file:$TPL_DIR/kafka/tools-log4j.properties" \
    -cp "$KAFKA_LIBS/*" kafka.admin.BrokerApiVersionsCommand \
    --bootstrap-server "127.0.0.1:${REPL_KAFKA_PORT[0]},127.0.0.1:${REPL_KAFKA_PORT[1]},127.0.0.1:${REPL_KAFKA_PORT[2]}" \
    2>"$REPL_DIR/kafka-brokers.err") || true
  grep -cE '^127\.0\.0\.1:[0-9]+ \(id: [0-9]+ rack' <<<"$out" || true
}
ch_query() { # http_port sql
  curl -sS --max-time 60 --data-binary "$2" "http://127.0.0.1:$1/" 2>&1
}
ch_cluster_replicas() { # http_port -> replicas of our cluster in system.clusters
  ch_query "$1" "SELECT count() FROM system.clusters WHERE cluster = '$REPL_CLICKHOUSE_CLUSTER'"
}
# ON CLUSTER DDL through ZooKeeper, a row inserted on replica 1, read back from replica 2.
ch_replication_check() {
  local token out i
  token=$(date +%s%N)
  out=$(ch_query "${REPL_CH_HTTP_PORT[0]}" "CREATE DATABASE IF NOT EXISTS engines_probe ON CLUSTER $REPL_CLICKHOUSE_CLUSTER") ||
    { log "clickhouse: CREATE DATABASE ON CLUSTER failed: $out"; return 1; }
  out=$(ch_query "${REPL_CH_HTTP_PORT[0]}" "CREATE TABLE IF NOT EXISTS engines_probe.replication ON CLUSTER $REPL_CLICKHOUSE_CLUSTER (id String, version UInt64) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/engines_probe/replication', '{replica}', version) ORDER BY id") ||
    { log "clickhouse: CREATE TABLE ON CLUSTER failed: $out"; return 1; }
  if grep -q 'Exception' <<<"$out"; then log "clickhouse: CREATE TABLE ON CLUSTER failed: $out"; return 1; fi
  out=$(ch_query "${REPL_CH_HTTP_PORT[0]}" "INSERT INTO engines_probe.replication VALUES ('$token', 1)")
  [ -z "$out" ] || { log "clickhouse: insert on replica 1 failed: $out"; return 1; }
  for i in $(seq 300); do
    [ "$(ch_query "${REPL_CH_HTTP_PORT[1]}" "SELECT count() FROM engines_probe.replication WHERE id = '$token'")" = 1 ] && return 0
    sleep 0.1
  done
  log "clickhouse: the row inserted on replica 1 did not reach replica 2 within 30 s"; return 1
}
# "master host:port" when every Sentinel names the same primary, sees the two others and a replica; else fails.
redis_sentinels_agree() {
  local p addr first="" info
  for p in "${REPL_SENTINEL_PORT[@]}"; do
    addr=$(redis_cli "$p" --raw SENTINEL get-master-addr-by-name "$REPL_REDIS_MASTER_NAME" | tr '\n' ':') || return 1
    [ -n "$first" ] || first=$addr
    [ "$addr" = "$first" ] || return 1
    info=$(redis_cli "$p" --raw SENTINEL master "$REPL_REDIS_MASTER_NAME" | tr -d '\r' | paste -sd' ') || return 1
    [[ " $info " == *" flags master "* && " $info " == *" num-other-sentinels 2 "* ]] || return 1
    [[ " $info " =~ \ num-slaves\ ([0-9]+)\  ]] && [ "${BASH_REMATCH[1]}" -ge 1 ] || return 1
  done
  [[ "$first" =~ ^[0-9.]+:[0-9]+:$ ]] || return 1
  redis_cli "${first#*:}" --raw info replication | tr -d '\r' | grep -q '^connected_slaves:[1-9]' || return 1
  echo "${first%:}"
}

# ---------------------------------------------------------------- commands
ensure_zookeeper_libs() {
  local sum tmp t0 mvnlog=$ENGINES_DIR/cache/mvn-zookeeper.log
  sum=$(sha256sum "$REPL_TPL/zookeeper/pom.xml" | cut -d' ' -f1)
  if [ -f "$ZOOKEEPER_LIBS/.complete" ] && [ "$(cat "$ZOOKEEPER_LIBS/.complete")" = "$sum" ]; then return 0; fi
  command -v mvn >/dev/null 2>&1 || apt_install maven
  t0=$(now_us)
  mkdir -p "$ENGINES_DIR/cache"
  tmp=$ZOOKEEPER_LIBS.tmp.$$
  rm -rf "$tmp"
  log "zookeeper: downloading server jars with Maven (pom: scripts/engines/replicated/zookeeper/pom.xml) ..."
  if ! mvn -q -B -Dstyle.color=never -f "$REPL_TPL/zookeeper/pom.xml" \
      dependency:copy-dependencies -DoutputDirectory="$tmp" >"$mvnlog" 2>&1; then
    rm -rf "$tmp"; show_log maven "$mvnlog"; die "zookeeper: mvn dependency:copy-dependencies failed"
  fi
  echo "$sum" >"$tmp/.complete"
  rm -rf "$ZOOKEEPER_LIBS"; mv "$tmp" "$ZOOKEEPER_LIBS"
  log "zookeeper: $(find "$ZOOKEEPER_LIBS" -name '*.jar' | wc -l) jars in ${ZOOKEEPER_LIBS#"$REPO_ROOT"/} ($(since "$t0"))"
}

repl_install() {
  lock                       # the single node's lock: apt and the jar caches are shared
  ENGINES="kafka clickhouse redis" cmd_install
  ensure_zookeeper_libs
  mkdir -p "$REPL_DIR"
  exec 9>"$REPL_DIR/.lock"   # from here on, this topology's own lock (the single node's is released)
  flock -w 600 9 || die "another scripts/engines.sh (replicated) is still running (lock $REPL_DIR/.lock)"
}

repl_up() {
  local name pid t0 fresh=() pending=() still=() failed=() running=0 waited master brokers replicas
  declare -A started_at=()
  repl_install
  for name in "${REPL_PROCS[@]}"; do proc_pid "$name" >/dev/null && running=$((running + 1)); done
  if [ "$running" = 0 ]; then
    # cold start: Sentinels forget the last run's primary and peers (redis-1 is the primary again, no data kept)
    rm -f "$REPL_DIR"/sentinel-*/sentinel.conf
  fi
  for name in "${REPL_PROCS[@]}"; do
    if proc_pid "$name" >/dev/null; then started_at[$name]=$(now_us); continue; fi
    rm -f "$(proc_pidfile "$name")"
    started_at[$name]=$(now_us)
    proc_launch "$name"
    fresh+=("$name")
  done
  pending=("${REPL_PROCS[@]}")
  while [ ${#pending[@]} -gt 0 ]; do
    still=()
    for name in "${pending[@]}"; do
      if proc_probe "$name"; then
        pid=$(proc_pid "$name") || pid='?'
        if [[ " ${fresh[*]} " == *" $name "* ]]; then
          log "$name: up, pid $pid, port $(proc_ports_label "$name") ($(since "${started_at[$name]}"))"
        else
          log "$name: already running, pid $pid, port $(proc_ports_label "$name")"
        fi
        continue
      fi
      waited=$((($(now_us) - started_at[$name]) / 1000000))
      if ! pid=$(proc_pid "$name"); then log "$name: process exited during startup"
      elif [ "$waited" -ge "$REPL_START_TIMEOUT" ]; then log "$name: no answer on port $(proc_port "$name") within ${REPL_START_TIMEOUT}s (pid $pid)"
      else still+=("$name"); continue; fi
      # shellcheck disable=SC2046
      show_log "$name" $(proc_logs "$name"); failed+=("$name")
    done
    pending=("${still[@]}")
    [ ${#pending[@]} -gt 0 ] && sleep 0.2
  done
  [ ${#failed[@]} = 0 ] || die "failed to start: ${failed[*]} (logs under $REPL_DIR)"

  # usable, not only listening
  t0=$(now_us)
  until [ "$(kafka_registered_brokers)" = 3 ]; do
    [ $((($(now_us) - t0) / 1000000)) -lt "$REPL_START_TIMEOUT" ] ||
      { show_log kafka-brokers "$REPL_DIR/kafka-brokers.err"; die "kafka: 3 brokers not registered within ${REPL_START_TIMEOUT}s"; }
    sleep 1
  done
  log "kafka: 3 brokers registered ($(since "$t0"))"
  t0=$(now_us)
  for name in clickhouse-1 clickhouse-2; do
    replicas=$(ch_cluster_replicas "$(proc_port "$name")")
    [ "$replicas" = 2 ] || die "clickhouse: $name lists $replicas replicas in cluster $REPL_CLICKHOUSE_CLUSTER (want 2)"
  done
  until ch_replication_check; do
    for name in clickhouse-1 clickhouse-2; do
      # 18.16 crashes (SIGSEGV in zkutil::ZooKeeper::createImpl) on ON CLUSTER DDL while ZooKeeper does not serve
      # shellcheck disable=SC2046
      proc_pid "$name" >/dev/null || { show_log "$name" $(proc_logs "$name"); die "$name: exited during the replication check"; }
    done
    [ $((($(now_us) - t0) / 1000000)) -lt "$REPL_START_TIMEOUT" ] || die "clickhouse: replication check failed for ${REPL_START_TIMEOUT}s"
    sleep 2
  done
  log "clickhouse: cluster $REPL_CLICKHOUSE_CLUSTER, 2 replicas, ON CLUSTER DDL and replication work ($(since "$t0"))"
  t0=$(now_us)
  until master=$(redis_sentinels_agree); do
    [ $((($(now_us) - t0) / 1000000)) -lt "$REPL_START_TIMEOUT" ] || die "redis: the 3 Sentinels do not agree on a primary with a replica within ${REPL_START_TIMEOUT}s"
    sleep 0.5
  done
  log "redis: 3 Sentinels agree, primary $master ($(since "$t0"))"
  log "up: replicated topology running ($(since "$T_SCRIPT"))"
}

repl_ch_nudge() { # ch_close_client_connections for the replica at REPL_NUDGE_INDEX
  CLICKHOUSE_HTTP_PORT=${REPL_CH_HTTP_PORT[$REPL_NUDGE_INDEX]} CLICKHOUSE_TCP_PORT=${REPL_CH_TCP_PORT[$REPL_NUDGE_INDEX]} \
    ch_close_client_connections
}
repl_stop() { # name: SIGTERM, wait, SIGKILL (ClickHouse: its open client connections closed after 3 s, as the single node)
  local name=$1 pid
  if ! pid=$(proc_pid "$name"); then log "$name: not running"; rm -f "$(proc_pidfile "$name")"; return 0; fi
  case $(proc_kind "$name") in
    clickhouse)
      REPL_NUDGE_INDEX=$(($(proc_index "$name") - 1))
      stop_pid "$name" "$pid" 30 3 repl_ch_nudge ;;
    kafka) stop_pid "$name" "$pid" 30 ;;
    *) stop_pid "$name" "$pid" 15 ;;
  esac
  rm -f "$(proc_pidfile "$name")"
}

repl_down() {
  local purge=0 name
  case "${1:-}" in --purge) purge=1 ;; "") ;; *) die "usage: down [--purge]" ;; esac
  mkdir -p "$REPL_DIR"
  exec 9>"$REPL_DIR/.lock"
  flock -w 600 9 || die "another scripts/engines.sh (replicated) is still running (lock $REPL_DIR/.lock)"
  # The brokers together: one stopping alone waits for the quorum the others keep, the last one has none left.
  for name in kafka-1 kafka-2 kafka-3; do repl_stop "$name" & done
  wait
  for name in clickhouse-1 clickhouse-2; do repl_stop "$name" & done
  wait
  # Sentinels before the data nodes: no failover while the primary stops.
  for name in zookeeper sentinel-1 sentinel-2 sentinel-3 redis-2 redis-1; do repl_stop "$name"; done
  if [ "$purge" = 1 ]; then
    find "$REPL_DIR" -mindepth 1 -maxdepth 1 ! -name .lock -exec rm -rf {} +
    log "replicated: data purged"
  fi
  log "down: replicated topology stopped ($(since "$T_SCRIPT"))"
}

repl_status() {
  local name pid state probe rc=0 brokers replicas master
  for name in "${REPL_PROCS[@]}"; do
    if pid=$(proc_pid "$name"); then state=running; else state=stopped; pid=-; fi
    if proc_probe "$name"; then probe=$(proc_probe_label "$name"); else probe=fail; rc=1; fi
    [ "$state" = running ] || rc=1
    printf '%-13s %-8s pid=%-8s rss=%-8s port=%-52s probe=%s\n' "$name" "$state" "$pid" \
      "$([ "$pid" = - ] && echo - || proc_rss "$pid")" "$(proc_ports_label "$name")" "$probe"
  done
  brokers=$(kafka_registered_brokers)
  printf '%-13s brokers registered: %s of 3\n' kafka "$brokers"; [ "$brokers" = 3 ] || rc=1
  replicas=$(ch_cluster_replicas "${REPL_CH_HTTP_PORT[0]}" 2>/dev/null || true)
  printf '%-13s cluster %s: %s replicas in system.clusters\n' clickhouse "$REPL_CLICKHOUSE_CLUSTER" "${replicas:-?}"
  [ "$replicas" = 2 ] || rc=1
  if master=$(redis_sentinels_agree); then printf '%-13s the 3 Sentinels agree: primary %s (master name %s)\n' redis "$master" "$REPL_REDIS_MASTER_NAME"
  else printf '%-13s the Sentinels do not agree on a primary with a replica\n' redis; rc=1; fi
  return $rc
}

replicated_main() {
  case "${1:-}" in
    install) repl_install ;;
    up) repl_up ;;
    down) shift; repl_down "$@" ;;
    status) repl_status ;;
    -h | --help | help) sed -n '2,22p' "$REPL_TPL/topology.sh" | sed 's/^# \{0,1\}//' ;;
    *) die "ENGINES_TOPOLOGY=replicated: usage: scripts/engines.sh install|up|down [--purge]|status" ;;
  esac
}
