#!/usr/bin/env bash
# A standalone Flink session cluster on this machine, from Maven Central jars:
# one JobManager and TASKMANAGERS TaskManagers as separate java processes on
# loopback, with a restart strategy. Their PIDs, logs and configuration go to
# RUN_DIR (see docs/flink-cluster.md).
#
#   deploy/flink/cluster.sh classpath           resolve the jars, print the classpath file
#   deploy/flink/cluster.sh start RUN_DIR       JobManager + TaskManagers; waits until all registered
#   deploy/flink/cluster.sh taskmanager RUN_DIR N   start TaskManager N (e.g. a replacement)
#   deploy/flink/cluster.sh stop RUN_DIR        stop every process started in RUN_DIR
#
# Environment: FLINK_VERSION (1.19.0: the Flink line of Beam's Flink 1.19 job
# server that fetch-jobserver.sh resolves), REST_PORT (8081), RPC_PORT (6123),
# TASKMANAGERS (2), SLOTS per TaskManager (2), TM_MEMORY (3072m), TM_MANAGED (768m), JM_MEMORY
# (1024m), RESTART_ATTEMPTS (10), MAVEN_REPO_LOCAL (~/.m2/repository).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
flink_version=${FLINK_VERSION:-1.19.0}
repo=${MAVEN_REPO_LOCAL:-$HOME/.m2/repository}
cpfile=${FLINK_CLASSPATH_FILE:-$HOME/.cache/smoothanon/flink-$flink_version.classpath}
rest_port=${REST_PORT:-8081}
rpc_port=${RPC_PORT:-6123}
taskmanagers=${TASKMANAGERS:-2}
slots=${SLOTS:-2}

die() { echo "cluster.sh: $*" >&2; exit 2; }
usage() { die "usage: cluster.sh classpath | start RUN_DIR | taskmanager RUN_DIR N | stop RUN_DIR"; }

# Flink on JDK 17 needs these opens (Flink's own scripts pass them).
java_opens=(--add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED
	--add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED
	--add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED
	--add-opens=java.base/java.util.concurrent=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
	--add-opens=java.base/java.text=ALL-UNNAMED --add-opens=java.base/java.time=ALL-UNNAMED)

# classpath resolves Flink's runtime from Maven Central (there is no
# flink-dist there) into ~/.m2 and writes the classpath to $cpfile, once.
classpath() {
	if [ -s "$cpfile" ] && tr ':' '\n' <"$cpfile" | while read -r j; do [ -s "$j" ] || exit 1; done; then
		echo "$cpfile"
		return
	fi
	command -v mvn >/dev/null || die "mvn not found (apt-get install -y maven)"
	command -v java >/dev/null || die "java not found (apt-get install -y openjdk-17-jre-headless)"
	local work dep deps=""
	work=$(mktemp -d)
	for dep in org.apache.flink:flink-runtime org.apache.flink:flink-clients org.apache.flink:flink-streaming-java \
		org.apache.flink:flink-rpc-akka-loader org.apache.flink:flink-runtime-web; do
		deps+="<dependency><groupId>${dep%%:*}</groupId><artifactId>${dep#*:}</artifactId><version>$flink_version</version></dependency>"
	done
	for dep in log4j-api log4j-core log4j-slf4j-impl log4j-1.2-api; do
		deps+="<dependency><groupId>org.apache.logging.log4j</groupId><artifactId>$dep</artifactId><version>2.17.1</version></dependency>"
	done
	cat >"$work/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>smoothanon</groupId><artifactId>flink-cluster</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>$deps</dependencies>
</project>
POM
	mkdir -p "$(dirname "$cpfile")"
	if ! (cd "$work" && mvn -B -q -Dmaven.repo.local="$repo" dependency:build-classpath \
		-Dmdep.outputFile="$work/cp.txt" >"$work/mvn.log" 2>&1) || [ ! -s "$work/cp.txt" ]; then
		grep -m3 -E 'ERROR|Could not' "$work/mvn.log" >&2 || true
		rm -rf "$work"
		die "could not resolve Flink $flink_version from Maven Central"
	fi
	mv "$work/cp.txt" "$cpfile"
	rm -rf "$work"
	echo "$cpfile"
}

# conf writes RUN_DIR/conf: flink-conf.yaml and log4j.properties.
conf() {
	local run=$1
	mkdir -p "$run/conf" "$run/log" "$run/tmp"
	cat >"$run/conf/flink-conf.yaml" <<CONF
jobmanager.rpc.address: localhost
jobmanager.rpc.port: $rpc_port
jobmanager.bind-host: 127.0.0.1
jobmanager.memory.process.size: ${JM_MEMORY:-1024m}
rest.address: localhost
rest.bind-address: 127.0.0.1
rest.port: $rest_port
taskmanager.bind-host: 127.0.0.1
taskmanager.host: 127.0.0.1
taskmanager.numberOfTaskSlots: $slots
parallelism.default: $((taskmanagers * slots))
taskmanager.memory.process.size: ${TM_MEMORY:-3072m}
# Managed memory holds the batch sort buffers, and a sort buffer refuses a
# record above a fraction of it (3.4 MB at 256m with 2 slots): Beam groups a
# key's values per partition into one record, so one partition's share of
# an output shard (~17 B/row) or of a chunk (~43 B/row) must fit.
taskmanager.memory.managed.size: ${TM_MANAGED:-768m}
# Two slots' blocking exchanges need more network buffers than the default.
taskmanager.memory.network.min: 512mb
taskmanager.memory.network.max: 512mb
# The PROCESS environment fetches the ~200 MB worker binary through direct
# memory: with the default (0) the fetch dies of a direct-memory OOM.
taskmanager.memory.task.off-heap.size: 512m
execution.batch-shuffle-mode: ALL_EXCHANGES_BLOCKING
# A lost TaskManager loses its blocking partitions: the whole job re-runs,
# using 2 attempts (the failure, then the missing partitions).
restart-strategy.type: fixed-delay
restart-strategy.fixed-delay.attempts: ${RESTART_ATTEMPTS:-10}
restart-strategy.fixed-delay.delay: 2 s
# Notice a killed TaskManager within seconds, not the default 50 s.
heartbeat.interval: 2000
heartbeat.timeout: 10000
io.tmp.dirs: $run/tmp
blob.storage.directory: $run/tmp
CONF
	cat >"$run/conf/log4j.properties" <<'LOG'
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = MainAppender
appender.main.name = MainAppender
appender.main.type = File
appender.main.append = true
appender.main.fileName = ${sys:log.file}
appender.main.layout.type = PatternLayout
appender.main.layout.pattern = %d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %-60c %x - %m%n
LOG
}

# launch NAME MAIN JVM_ARGS... -- ARGS...: start one java process in the
# background (its own process group), PID in RUN_DIR/NAME.pid.
launch() {
	local run=$1 name=$2 main=$3
	shift 3
	local jvm=() args=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do jvm+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	args=("$@")
	# Workers (boot loader, pipeline_options.json) start in the TaskManager's
	# directory: keep them in the run dir.
	(cd "$run" && exec setsid java "${java_opens[@]}" "${jvm[@]}" -Dlog.file="$run/log/$name.log" \
		-Dlog4j.configurationFile="file:$run/conf/log4j.properties" -cp "$(cat "$cpfile")" "$main" \
		--configDir "$run/conf" "${args[@]}" >"$run/log/$name.out" 2>&1) &
	echo $! >"$run/$name.pid"
}

# running PID: the process exists and is not a zombie (a killed
# TaskManager whose parent already exited may stay a zombie for a while).
running() { [ -r "/proc/$1/stat" ] && ! sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | grep -q '^Z'; }

# rest GET PATH: the JobManager's REST answer.
rest() { curl -fsS "http://127.0.0.1:$rest_port$1" 2>/dev/null || python3 -c "import sys,urllib.request;print(urllib.request.urlopen(sys.argv[1],timeout=5).read().decode())" "http://127.0.0.1:$rest_port$1" 2>/dev/null; }

registered() { rest /taskmanagers | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["taskmanagers"]))' 2>/dev/null || echo 0; }

taskmanager() {
	local run=$1 n=$2 out jvm dyn
	# TaskManagerRunner refuses to start without explicit memory sizes; Flink's
	# taskmanager.sh computes them with BashJavaUtils, and so do we.
	out=$(java -cp "$(cat "$cpfile")" org.apache.flink.runtime.util.bash.BashJavaUtils GET_TM_RESOURCE_PARAMS \
		--configDir "$run/conf" 2>&1) || die "BashJavaUtils failed: $(echo "$out" | tail -3)"
	jvm=$(echo "$out" | sed -n 's/^BASH_JAVA_UTILS_EXEC_RESULT://p' | sed -n 1p)
	dyn=$(echo "$out" | sed -n 's/^BASH_JAVA_UTILS_EXEC_RESULT://p' | sed -n 2p)
	[ -n "$jvm" ] && [ -n "$dyn" ] || die "BashJavaUtils printed no memory settings: $(echo "$out" | tail -3)"
	# shellcheck disable=SC2086 # word splitting of the generated flags is intended
	launch "$run" "taskmanager-$n" org.apache.flink.runtime.taskexecutor.TaskManagerRunner $jvm -- $dyn
}

wait_registered() {
	local run=$1 want=$2 i
	for i in $(seq 180); do
		[ "$(registered)" -ge "$want" ] && return 0
		running "$(cat "$run/jobmanager.pid")" || die "the JobManager exited; see $run/log/jobmanager.log"
		sleep 1
	done
	die "only $(registered) of $want TaskManagers registered after 180 s; see $run/log"
}

start() {
	local run=$1 n
	mkdir -p "$run"
	run=$(cd "$run" && pwd)
	ls "$run"/*.pid >/dev/null 2>&1 && die "$run already has a cluster (stop it first)"
	(echo >"/dev/tcp/127.0.0.1/$rest_port") 2>/dev/null && die "port $rest_port is in use (set REST_PORT)"
	classpath >/dev/null
	conf "$run"
	launch "$run" jobmanager org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint -Xmx512m -Xms512m --
	for n in $(seq "$taskmanagers"); do taskmanager "$run" "$n"; done
	wait_registered "$run" "$taskmanagers"
	echo "Flink $flink_version session cluster: http://127.0.0.1:$rest_port, $taskmanagers TaskManagers x $slots slots, run dir $run"
}

stop() {
	local run=$1 p pid
	for p in "$run"/*.pid; do
		[ -e "$p" ] || continue
		pid=$(cat "$p")
		# Each java runs in a process group of its own (setsid): end it with
		# whatever it started (boot loaders, Go workers).
		kill -TERM -- "-$pid" 2>/dev/null || true
	done
	for p in "$run"/*.pid; do
		[ -e "$p" ] || continue
		pid=$(cat "$p")
		for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
		kill -KILL -- "-$pid" 2>/dev/null || true
		rm -f "$p"
	done
}

cmd=${1:-}
if [ "$cmd" = classpath ] && [ $# -eq 1 ]; then
	classpath
elif [ "$cmd" = start ] && [ $# -eq 2 ]; then
	start "$2"
elif [ "$cmd" = taskmanager ] && [ $# -eq 3 ]; then
	run=$(cd "$2" 2>/dev/null && pwd) || die "no run dir $2"
	[ -s "$run/conf/flink-conf.yaml" ] || die "$run has no cluster configuration (run start first)"
	taskmanager "$run" "$3"
	live=0
	for p in "$run"/taskmanager-*.pid; do
		if running "$(cat "$p")"; then live=$((live + 1)); fi
	done
	wait_registered "$run" "$live"
elif [ "$cmd" = stop ] && [ $# -eq 2 ]; then
	stop "$2"
else
	usage
fi
