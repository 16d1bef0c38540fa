#!/usr/bin/env bash
# Real servers for the test suite, bound to 127.0.0.1 only:
#   Kafka 3.9.x (KRaft, jars from Maven Central), FerretDB v1.24 (built with Go) on PostgreSQL (Debian's
#   `postgresql`), Redis (Debian), an S3-compatible server (gofakes3, MIT, built from the Go module proxy),
#   an OpenTelemetry Collector (OTLP/HTTP in, spans to a JSON-lines file; built with the Collector Builder
#   from the Go module proxy; .ci/servers/otelcol.sh).
#   FERRETDB_HANDLER=sqlite runs FerretDB on its SQLite backend instead (no PostgreSQL; slower).
#
#   bash .ci/servers.sh start    install what is missing (cached), start what is not running, wait until ready
#   bash .ci/servers.sh stop
#   bash .ci/servers.sh status   exit 0 only if all are up
#   bash .ci/servers.sh restart NAME [DOWN_SECONDS]
#                                stop one (kafka, ferretdb, postgres, redis, s3, otelcol), leave it down, start it
#                                again (the soak's --faults uses it)
#
# Everything lives under $SERVERS_DIR (default <repo>/.servers): jars, binary, data, logs/, run/ (pid files)
# and env (KAFKA_BROKERS, MONGODB_URL, REDIS_URL, S3_*, OTEL_TEST_ENDPOINT, OTEL_TEST_SPANS_FILE;
# `set -a; . "$SERVERS_DIR/env"; set +a`). The OTEL_TEST_* names are deliberately not OTEL_EXPORTER_OTLP_*:
# test processes do not export spans unless a test points an exporter at OTEL_TEST_ENDPOINT.
# Ports: KAFKA_PORT (9092), KAFKA_CONTROLLER_PORT (9093), MONGO_PORT (27017), REDIS_PORT (6379), S3_PORT (9310),
# PG_PORT (55432: PostgreSQL behind FerretDB, not the system's 5432), OTEL_PORT (4318: OTLP over HTTP).
# PostgreSQL refuses to run as root: as root the script runs initdb/postgres as the `postgres` user (setpriv),
# with the data dir in $SERVERS_DIR/postgres (or, when that user cannot reach it, e.g. under /root, in
# /var/lib/postgresql/flow-servers-<hash>, linked from there); TCP on 127.0.0.1 only, trust auth, no unix socket.
# Download caches stay where the tools keep them (~/.m2, Go module and build caches), so a fresh
# clone on the same machine rebuilds quickly.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
HERE=$ROOT/.ci/servers
SERVERS_DIR=${SERVERS_DIR:-$ROOT/.servers}
mkdir -p "$SERVERS_DIR"
SERVERS_DIR=$(cd "$SERVERS_DIR" && pwd)
LOGS=$SERVERS_DIR/logs RUN=$SERVERS_DIR/run
HOST=127.0.0.1
KAFKA_PORT=${KAFKA_PORT:-9092} KAFKA_CONTROLLER_PORT=${KAFKA_CONTROLLER_PORT:-9093}
MONGO_PORT=${MONGO_PORT:-27017} REDIS_PORT=${REDIS_PORT:-6379} S3_PORT=${S3_PORT:-9310} PG_PORT=${PG_PORT:-55432}
FERRETDB_HANDLER=${FERRETDB_HANDLER:-postgresql}
[[ $FERRETDB_HANDLER == postgresql || $FERRETDB_HANDLER == sqlite ]] || { echo "FERRETDB_HANDLER: postgresql or sqlite" >&2; exit 2; }
KAFKA_VERSIONS=${KAFKA_VERSION:-3.9.1 3.9.0}       # first one that resolves wins
FERRETDB_VERSION=v1.24.0
GO_FALLBACK=1.22.12                                # toolchain module used only if no Go >= 1.22 is installed
KAFKA=$SERVERS_DIR/kafka FERRET=$SERVERS_DIR/ferretdb-src REDIS=$SERVERS_DIR/redis
FERRET_BIN=$SERVERS_DIR/bin/ferretdb-embedded
export PATH="$PATH:/usr/local/go/bin"

log() { echo "[servers] $*" >&2; }
die() { echo "[servers] ERROR: $*" >&2; exit 1; }
port_open() { timeout 2 bash -c "exec 3<>/dev/tcp/$HOST/$1" 2>/dev/null; }
pid_of() { [[ -s $RUN/$1.pid ]] && cat "$RUN/$1.pid"; }
pid_alive() { local p; p=$(pid_of "$1") && kill -0 "$p" 2>/dev/null; }

# wait_until NAME SECONDS CMD...: poll CMD; fail early if NAME's process died, show its log tail.
wait_until() {
  local name=$1 t=$2 end=$((SECONDS + $2)); shift 2
  until "$@" >/dev/null 2>&1; do
    local why=""
    pid_alive "$name" || why="$name exited during startup"
    ((SECONDS < end)) || why="$name not ready after ${t}s"
    if [[ -n $why ]]; then
      tail -n 25 "$LOGS/$name".{out,log} 2>/dev/null >&2 || true
      die "$why (logs in $LOGS)"
    fi
    sleep 1
  done
}

# spawn NAME CMD...: run CMD detached (own session), pid in run/NAME.pid, stdout+stderr in logs/NAME.out
spawn() {
  local name=$1; shift
  setsid nohup bash -c 'echo $$ >"$0"; exec "$@"' "$RUN/$name.pid" "$@" >"$LOGS/$name.out" 2>&1 </dev/null 9>&- &
  local i; for i in {1..50}; do [[ -s $RUN/$name.pid ]] && return; sleep 0.1; done
}

# already_up NAME PORT: 0 if ours and listening; dies if the port is held by some other process
already_up() {
  if pid_alive "$1"; then port_open "$2" && return 0; return 1; fi  # alive but not listening: still starting
  rm -f "$RUN/$1.pid"
  ! port_open "$2" || die "port $HOST:$2 for $1 is in use by a process not started by this script"
  return 1
}

# ---------------------------------------------------------------- installation
APT_UPDATED=
apt_install() {
  [[ $(id -u) == 0 ]] || die "missing $*; run as root or install: apt-get install $*"
  [[ -n $APT_UPDATED ]] || { log "apt-get update"; apt-get update -qq; APT_UPDATED=1; }
  log "apt-get install $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >"$LOGS/apt.log" 2>&1 ||
    { tail -n 20 "$LOGS/apt.log" >&2; die "apt-get install $* failed"; }
}

install_packages() {
  local missing=()
  command -v java >/dev/null || missing+=(openjdk-17-jre-headless)
  [[ -f $KAFKA/jars/.complete ]] || command -v mvn >/dev/null || missing+=(maven)
  command -v redis-server >/dev/null || missing+=(redis-server)
  command -v redis-cli >/dev/null || missing+=(redis-tools)
  # Issue 32: the public integration events are read in the tests by kcat (Debian's kafkacat) and
  # by a Python consumer in a venv (.ci/public-consumer.sh).
  command -v kcat >/dev/null || missing+=(kcat)
  python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
  [[ $FERRETDB_HANDLER != postgresql ]] || pg_bin >/dev/null || missing+=(postgresql)
  ((${#missing[@]})) || return 0
  apt_install "${missing[@]}"
  # Likewise the postgresql package creates and starts the system's cluster on 5432; ours is separate.
  if [[ " ${missing[*]} " == *" postgresql "* ]]; then
    { service postgresql stop || systemctl disable --now postgresql; } >/dev/null 2>&1 || true
  fi
  # Without a policy-rc.d, the package starts the system's own redis on 6379: stop it.
  if [[ " ${missing[*]} " == *" redis-server "* ]]; then
    { service redis-server stop || systemctl disable --now redis-server; } >/dev/null 2>&1 || true
  fi
}

install_kafka() {
  [[ -f $KAFKA/jars/.complete ]] && return
  mkdir -p "$KAFKA"
  local v
  for v in $KAFKA_VERSIONS; do
    log "kafka: fetching org.apache.kafka:kafka_2.13:$v and its runtime dependencies (Maven Central)"
    sed "s/@KAFKA_VERSION@/$v/" "$HERE/kafka-pom.xml" >"$KAFKA/pom.xml"
    rm -rf "$KAFKA/jars.tmp"
    if mvn -q -B -f "$KAFKA/pom.xml" org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory="$KAFKA/jars.tmp" >"$LOGS/kafka-install.log" 2>&1; then
      rm -rf "$KAFKA/jars" && mv "$KAFKA/jars.tmp" "$KAFKA/jars" && echo "$v" >"$KAFKA/jars/.complete"
      return
    fi
    log "kafka $v did not resolve (see $LOGS/kafka-install.log)"
  done
  die "could not fetch Kafka jars for any of: $KAFKA_VERSIONS"
}

# go_ok GO [MIN]: GO's version is >= MIN (1.22)
go_ok() { local v m=${2:-1.22}; v=$("$1" env GOVERSION 2>/dev/null) && v=${v#go} && [[ $(printf '%s\n' "$m" "$v" | sort -V | head -n1) == "$m" ]]; }

# find_go [MIN FALLBACK]: prints the path of a Go >= MIN (1.22). Fallback: any go (Debian's is 1.19) fetches
# the official toolchain module golang.org/toolchain (version FALLBACK, default $GO_FALLBACK) from the Go
# module proxy, as `GOTOOLCHAIN` switching does in newer Go.
find_go() {
  local g min=${1:-1.22} fallback=${2:-$GO_FALLBACK}
  for g in "$(command -v go || true)" /usr/local/go/bin/go; do
    [[ -x $g ]] && go_ok "$g" "$min" && { echo "$g"; return; }
  done
  command -v go >/dev/null || apt_install golang-go >&2
  local mod="golang.org/toolchain@v0.0.1-go$fallback.linux-$(dpkg --print-architecture)" dir
  dir=$(cd /tmp && GOTOOLCHAIN=local GOFLAGS=-modcacherw go mod download -json "$mod" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  [[ -n $dir ]] || die "no Go >= $min and could not download $mod"
  chmod -R u+x "$dir/bin" "$dir/pkg/tool"    # module zips carry no exec bits
  echo "$dir/bin/go"
}

install_ferretdb() {
  [[ -x $FERRET_BIN ]] && cmp -s "$HERE/ferretdb-main.go" "$FERRET/main.go" && return
  local go; go=$(find_go)
  log "ferretdb: building $FERRETDB_VERSION (embedded; PostgreSQL and SQLite backends) with $("$go" env GOVERSION); takes a few minutes the first time"
  mkdir -p "$FERRET" "$(dirname "$FERRET_BIN")"
  cp "$HERE/ferretdb-main.go" "$FERRET/main.go.new"
  printf 'module local.ci/ferretdb-embedded\n\ngo 1.22\n' >"$FERRET/go.mod"
  rm -f "$FERRET/go.sum"
  if ! (cd "$FERRET" && mv main.go.new main.go &&
    "$go" get "github.com/FerretDB/FerretDB@$FERRETDB_VERSION" && "$go" mod tidy &&
    "$go" build -trimpath -o "$FERRET_BIN.tmp" .) >"$LOGS/ferretdb-install.log" 2>&1; then
    rm -f "$FERRET/main.go"    # forces a rebuild next time
    tail -n 20 "$LOGS/ferretdb-install.log" >&2
    die "building FerretDB failed (log: $LOGS/ferretdb-install.log)"
  fi
  mv "$FERRET_BIN.tmp" "$FERRET_BIN"
}

# ---------------------------------------------------------------- S3-compatible server (object store contract)
# gofakes3: small, MIT, one `go install` from the Go module proxy (MinIO is AGPL; versitygw is not on the proxy
# list here). It speaks the S3 REST API the AWS SDK uses (put/get/delete, multipart uploads, presigned GETs)
# but does not verify signatures, so presigned-URL expiry is enforced only by real S3 servers.
GOFAKES3_VERSION=v1.2.0 S3_DIR=$SERVERS_DIR/s3 S3_BIN=$SERVERS_DIR/bin/gofakes3
install_s3() {
  [[ -x $S3_BIN && -f $S3_BIN.$GOFAKES3_VERSION ]] && return
  local go; go=$(find_go)
  log "s3: building gofakes3 $GOFAKES3_VERSION with $("$go" env GOVERSION)"
  mkdir -p "$SERVERS_DIR/bin"
  (cd /tmp && GOBIN="$SERVERS_DIR/bin" GOFLAGS=-modcacherw "$go" install "github.com/johannesboyne/gofakes3/cmd/gofakes3@$GOFAKES3_VERSION") \
    >"$LOGS/s3-install.log" 2>&1 || { tail -n 20 "$LOGS/s3-install.log" >&2; die "building gofakes3 failed (log: $LOGS/s3-install.log)"; }
  rm -f "$S3_BIN".v* && touch "$S3_BIN.$GOFAKES3_VERSION"
}
# The bucket is created before the port opens.
s3_ready() { port_open "$S3_PORT"; }
start_s3() {
  already_up s3 "$S3_PORT" && return
  pid_alive s3 || {
    log "s3: starting"
    mkdir -p "$S3_DIR"
    spawn s3 "$S3_BIN" -backend bolt -bolt.db "$S3_DIR/s3.db" -initialbucket flow-test -host "$HOST:$S3_PORT" -quiet
  }
  wait_until s3 30 s3_ready
}

# ---------------------------------------------------------------- OpenTelemetry Collector
. "$HERE/otelcol.sh"

# ---------------------------------------------------------------- servers
kafka_java() { java -Dlog4j.configuration="file:$KAFKA/$1" -cp "$KAFKA/jars/*" "${@:2}"; }
kafka_ready() { port_open "$KAFKA_PORT" && timeout 30 java -Dlog4j.configuration="file:$KAFKA/tools-log4j.properties" \
  -cp "$KAFKA/jars/*" kafka.admin.BrokerApiVersionsCommand --bootstrap-server "$HOST:$KAFKA_PORT"; }

start_kafka() {
  already_up kafka "$KAFKA_PORT" && return
  pid_alive kafka || {
    port_open "$KAFKA_CONTROLLER_PORT" && die "controller port $HOST:$KAFKA_CONTROLLER_PORT is in use"
    cat >"$KAFKA/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$HOST:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://$HOST:$KAFKA_PORT,CONTROLLER://$HOST:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://$HOST:$KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$KAFKA/data
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
num.partitions=3
# Each partition preallocates its offset and time indexes (10 MiB each by default); tests create
# thousands of partitions, so a long-lived data dir grew to tens of GB. 1 MiB is plenty here.
log.index.size.max.bytes=1048576
EOF
    cat >"$KAFKA/log4j.properties" <<EOF
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.RollingFileAppender
log4j.appender.file.File=$LOGS/kafka.log
log4j.appender.file.MaxFileSize=20MB
log4j.appender.file.MaxBackupIndex=2
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
# per-partition chatter: tens of MB within minutes when tests create many topics
log4j.logger.org.apache.kafka.controller=WARN
log4j.logger.state.change.logger=WARN
log4j.logger.kafka.log=WARN
log4j.logger.kafka.cluster=WARN
EOF
    printf '%s\n' 'log4j.rootLogger=WARN, err' 'log4j.appender.err=org.apache.log4j.ConsoleAppender' \
      'log4j.appender.err.Target=System.err' 'log4j.appender.err.layout=org.apache.log4j.PatternLayout' \
      'log4j.appender.err.layout.ConversionPattern=%p %m (%c)%n' >"$KAFKA/tools-log4j.properties"
    if [[ ! -f $KAFKA/data/meta.properties ]]; then
      local id; id=$(kafka_java tools-log4j.properties kafka.tools.StorageTool random-uuid)
      kafka_java tools-log4j.properties kafka.tools.StorageTool format -t "$id" -c "$KAFKA/server.properties" \
        >"$LOGS/kafka-format.log" 2>&1 || { cat "$LOGS/kafka-format.log" >&2; die "kafka storage format failed"; }
    fi
    log "kafka: starting"
    (cd "$KAFKA" && spawn kafka java -Xmx1g -Xms512m -Dlog4j.configuration="file:$KAFKA/log4j.properties" \
      -cp "$KAFKA/jars/*" kafka.Kafka "$KAFKA/server.properties")
  }
  wait_until kafka 90 kafka_ready
}

start_ferretdb() {
  if already_up ferretdb "$MONGO_PORT"; then
    local h; h=$(cat "$RUN/ferretdb.handler" 2>/dev/null || echo sqlite)
    [[ $h == "$FERRETDB_HANDLER" ]] ||
      log "WARNING: ferretdb is running on $h, not $FERRETDB_HANDLER: \`bash .ci/servers.sh stop\` first to switch"
    return
  fi
  pid_alive ferretdb || {
    log "ferretdb: starting ($FERRETDB_HANDLER)"
    local backend=(-handler sqlite -dir "$SERVERS_DIR/ferretdb-data")
    # pool_max_conns above any number of commands clients run at once: FerretDB 1.24 answers an update
    # while holding the connection of its query and takes a second one for the write, so as many
    # concurrent updates as the pool has connections (its default is 50) deadlock every command.
    [[ $FERRETDB_HANDLER == sqlite ]] ||
      backend=(-postgresql-url "postgres://postgres@$HOST:$PG_PORT/$PG_DB?pool_max_conns=$FERRETDB_PG_POOL")
    echo "$FERRETDB_HANDLER" >"$RUN/ferretdb.handler"
    spawn ferretdb "$FERRET_BIN" -log-level "${FERRETDB_LOG_LEVEL:-warn}" -listen "$HOST:$MONGO_PORT" "${backend[@]}"
  }
  wait_until ferretdb 30 "$FERRET_BIN" -ping "$HOST:$MONGO_PORT"
}

# ---------------------------------------------------------------- PostgreSQL (FerretDB's backend)
# Debian's server binaries live in /usr/lib/postgresql/<major>/bin (not on PATH): the newest one.
pg_bin() { local d; d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1); [[ -x $d/postgres ]] && echo "$d"; }
PG_DB=ferretdb
FERRETDB_PG_POOL=${FERRETDB_PG_POOL:-380}
# as_pg CMD...: run CMD as the postgres user when root (PostgreSQL refuses root), else as ourselves.
AS_PG=()
[[ $(id -u) != 0 ]] || AS_PG=(setpriv --reuid=postgres --regid=postgres --init-groups --reset-env --)
as_pg() { "${AS_PG[@]}" "$@"; }
# Prints the data dir, creating it: $SERVERS_DIR/postgres/data, or a dir the postgres user can reach.
pg_data() {
  local d=$SERVERS_DIR/postgres
  if [[ -L $d ]]; then echo "$(readlink "$d")/data"; return; fi
  mkdir -p "$d"
  if [[ $(id -u) == 0 ]]; then
    chown postgres: "$d"
    if ! as_pg test -w "$d"; then   # a parent dir is closed to others (e.g. a clone under /root)
      rmdir "$d"
      local alt; alt=/var/lib/postgresql/flow-servers-$(printf %s "$SERVERS_DIR" | md5sum | cut -c1-12)
      mkdir -p "$alt" && chown postgres: "$alt" && ln -s "$alt" "$d"
      log "postgres: $SERVERS_DIR is closed to the postgres user; data in $alt"
      d=$alt
    fi
  fi
  echo "$d/data"
}
pg_ready() { "$PGBIN/pg_isready" -q -h "$HOST" -p "$PG_PORT" -d postgres -U postgres; }
start_postgres() {
  [[ $FERRETDB_HANDLER == postgresql ]] || return 0
  PGBIN=$(pg_bin) || die "no PostgreSQL server in /usr/lib/postgresql/*/bin"
  if ! already_up postgres "$PG_PORT"; then
    pid_alive postgres || {
      local data; data=$(pg_data)
      if [[ ! -f $data/PG_VERSION ]]; then
        log "postgres: initdb $data"
        rm -rf "$data"
        as_pg "$PGBIN/initdb" -D "$data" -U postgres --auth=trust --no-locale -E UTF8 >"$LOGS/postgres-initdb.log" 2>&1 ||
          { tail -n 20 "$LOGS/postgres-initdb.log" >&2; die "initdb failed (log: $LOGS/postgres-initdb.log)"; }
      fi
      rm -f "$data/postmaster.pid"   # left by a killed server; our pid file said it is gone
      log "postgres: starting"
      # synchronous_commit=off: a commit is acknowledged before its WAL is flushed (within ~0.2 s), which is
      # what MongoDB's default write concern {w:1} does with its journal (flushed every 100 ms); fsync stays
      # on, so a crash loses at most that window, never consistency.
      spawn postgres "${AS_PG[@]}" "$PGBIN/postgres" -D "$data" -c listen_addresses="$HOST" -p "$PG_PORT" \
        -c unix_socket_directories= -c max_connections=$((FERRETDB_PG_POOL + 20)) -c synchronous_commit=off -c shared_buffers=256MB
    }
    wait_until postgres 60 pg_ready
  fi
  [[ $("$PGBIN/psql" -h "$HOST" -p "$PG_PORT" -U postgres -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'") == 1 ]] ||
    "$PGBIN/psql" -q -h "$HOST" -p "$PG_PORT" -U postgres -d postgres -c "CREATE DATABASE $PG_DB" >/dev/null ||
    die "could not create database $PG_DB"
}

redis_ping() { [[ $(redis-cli -h "$HOST" -p "$REDIS_PORT" ping 2>/dev/null) == PONG ]]; }
start_redis() {
  already_up redis "$REDIS_PORT" && return
  pid_alive redis || {
    log "redis: starting"
    mkdir -p "$REDIS"
    redis-server --bind "$HOST" --port "$REDIS_PORT" --daemonize yes --dir "$REDIS" \
      --pidfile "$RUN/redis.pid" --logfile "$LOGS/redis.log" 9>&- || die "redis-server failed (log: $LOGS/redis.log)"
    local i; for i in {1..50}; do [[ -s $RUN/redis.pid ]] && break; sleep 0.1; done  # daemon writes it
  }
  wait_until redis 30 redis_ping
}

# ---------------------------------------------------------------- commands
SERVERS=(kafka:KAFKA_PORT ferretdb:MONGO_PORT redis:REDIS_PORT s3:S3_PORT otelcol:OTEL_PORT)
[[ $FERRETDB_HANDLER == sqlite ]] || SERVERS+=(postgres:PG_PORT)

status() {
  local s name var port rc=0
  for s in "${SERVERS[@]}"; do
    name=${s%%:*} var=${s#*:} && port=${!var}
    if pid_alive "$name" && port_open "$port"; then
      printf '%-9s up    %s:%s (pid %s)\n' "$name" "$HOST" "$port" "$(pid_of "$name")"
    else
      printf '%-9s down  %s:%s\n' "$name" "$HOST" "$port"; rc=3
    fi
  done
  return $rc
}

stop_one() {
  local name=$1 sig=${2:-TERM} p i
  p=$(pid_of "$name") && kill -0 "$p" 2>/dev/null || { rm -f "$RUN/$name.pid"; return 0; }
  log "$name: stopping (pid $p)"
  kill -"$sig" "$p"
  for i in {1..60}; do kill -0 "$p" 2>/dev/null || break; sleep 0.5; done
  kill -0 "$p" 2>/dev/null && { log "$name: still running after 30s, killing"; kill -KILL "$p"; }
  rm -f "$RUN/$name.pid"
}

mkdir -p "$LOGS" "$RUN"
if [[ ${1:-} == st[ao][rp]* || ${1:-} == restart ]]; then
  # Serialise start/stop. Servers are started with fd 9 closed, or they would keep holding the lock.
  exec 9>"$SERVERS_DIR/.lock"
  flock -w 900 9 || die "another servers.sh has held $SERVERS_DIR/.lock for 15 minutes"
fi

case ${1:-} in
start)
  install_packages
  install_otelcol_bg    # the longest build: in the background, beside Kafka's fetch and FerretDB's build
  install_kafka
  install_ferretdb
  install_s3
  install_otelcol_wait
  start_kafka
  start_postgres
  start_ferretdb
  start_redis
  start_s3
  start_otelcol
  status
  cat >"$SERVERS_DIR/env" <<EOF
KAFKA_BROKERS=$HOST:$KAFKA_PORT
MONGODB_URL=mongodb://$HOST:$MONGO_PORT/
REDIS_URL=redis://$HOST:$REDIS_PORT
S3_ENDPOINT=http://$HOST:$S3_PORT
S3_BUCKET=flow-test
S3_REGION=us-east-1
S3_ACCESS_KEY_ID=test
S3_SECRET_ACCESS_KEY=test
OTEL_TEST_ENDPOINT=http://$HOST:$OTEL_PORT
OTEL_TEST_SPANS_FILE=$OTELCOL_SPANS
EOF
  cat "$SERVERS_DIR/env"
  ;;
stop)  # postgres: SIGINT is its fast shutdown (SIGTERM waits for every client to disconnect)
  for s in otelcol s3 redis ferretdb kafka; do stop_one "$s"; done
  stop_one postgres INT ;;
status) status ;;
restart)
  name=${2:-}
  [[ $name =~ ^(kafka|ferretdb|postgres|redis|s3|otelcol)$ ]] || die "usage: bash .ci/servers.sh restart kafka|ferretdb|postgres|redis|s3|otelcol [DOWN_SECONDS]"
  if [[ $name == postgres ]]; then stop_one postgres INT; else stop_one "$name"; fi
  sleep "${3:-0}"
  "start_$name"
  log "$name: up again" ;;
*) die "usage: bash .ci/servers.sh start|stop|status|restart NAME [DOWN_SECONDS]" ;;
esac
