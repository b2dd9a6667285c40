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
# On hosts of their own (hosts.sh: one run dir per host), each process is
# started alone and the addresses are set:
#
#   JM_ADDRESS=10.77.0.2 BIND_ADDRESS=0.0.0.0 cluster.sh jobmanager RUN_DIR
#   JM_ADDRESS=10.77.0.2 TM_ADDRESS=10.77.0.11 BIND_ADDRESS=0.0.0.0 cluster.sh taskmanager RUN_DIR 1
#   JM_ADDRESS=10.77.0.2 JOB_HOST=10.77.0.3 cluster.sh jobserver RUN_DIR
#
# `jobserver` starts Beam's Flink job server (fetch-jobserver.sh) for the
# cluster at JM_ADDRESS:REST_PORT on JOB_HOST:JOB_PORT (8099), its artifact
# service on ARTIFACT_PORT (8098), staging artifacts in ARTIFACTS_DIR
# (RUN_DIR/artifacts; a gs:// prefix when no disk is shared). With
# GCS_ENDPOINT set (a GCS emulator) it runs EmulatorJobServer.java instead
# of Beam's driver. Each waits until its process answers.
#
# Environment: FLINK_VERSION (1.19.0: the Flink line of Beam's Flink 1.19 job
# server that fetch-jobserver.sh resolves), REST_PORT (8081), RPC_PORT (6123),
# TASKMANAGERS (2), SLOTS per TaskManager (2), TM_MEMORY (3072m), TM_MANAGED (768m), JM_MEMORY
# (1024m), RESTART_ATTEMPTS (10), MAVEN_REPO_LOCAL (~/.m2/repository),
# JM_ADDRESS (localhost: where the JobManager is reached), TM_ADDRESS
# (127.0.0.1: where a TaskManager is reached), BIND_ADDRESS (127.0.0.1: where
# both listen), JOB_HOST, JOB_PORT, ARTIFACT_PORT, ARTIFACTS_DIR, GCS_ENDPOINT,
# JOBSERVER_HEAP (1g).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
flink_version=${FLINK_VERSION:-1.19.0}
repo=${MAVEN_REPO_LOCAL:-$HOME/.m2/repository}
cpfile=${FLINK_CLASSPATH_FILE:-$HOME/.cache/smoothanon/flink-$flink_version.classpath}
rest_port=${REST_PORT:-8081}
rpc_port=${RPC_PORT:-6123}
taskmanagers=${TASKMANAGERS:-2}
slots=${SLOTS:-2}
jm_address=${JM_ADDRESS:-localhost}
tm_address=${TM_ADDRESS:-127.0.0.1}
bind_address=${BIND_ADDRESS:-127.0.0.1}
# The JobManager's REST endpoint as this script asks it.
rest_host=${JM_ADDRESS:-127.0.0.1}

die() { echo "cluster.sh: $*" >&2; exit 2; }
usage() { die "usage: cluster.sh classpath | start RUN_DIR | jobmanager RUN_DIR | taskmanager RUN_DIR N | jobserver RUN_DIR | stop RUN_DIR"; }

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
jobmanager.rpc.address: $jm_address
jobmanager.rpc.port: $rpc_port
jobmanager.bind-host: $bind_address
jobmanager.memory.process.size: ${JM_MEMORY:-1024m}
rest.address: $jm_address
rest.bind-address: $bind_address
rest.port: $rest_port
taskmanager.bind-host: $bind_address
taskmanager.host: $tm_address
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
rest() { curl -fsS "http://$rest_host:$rest_port$1" 2>/dev/null || python3 -c "import sys,urllib.request;print(urllib.request.urlopen(sys.argv[1],timeout=5).read().decode())" "http://$rest_host:$rest_port$1" 2>/dev/null; }

# registered [ADDRESS]: how many TaskManagers (at ADDRESS) the JobManager knows.
registered() {
	rest /taskmanagers | python3 -c 'import json,sys
tms = json.load(sys.stdin)["taskmanagers"]
print(len([t for t in tms if sys.argv[1] in t["path"]]))' "${1:+@$1:}" 2>/dev/null || echo 0
}

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

# wait_here RUN_DIR: until the TaskManagers of RUN_DIR that run are
# registered, on a host of their own (no JobManager in RUN_DIR).
wait_here() {
	local run=$1 live=0 p i
	for i in $(seq 180); do
		live=0
		for p in "$run"/taskmanager-*.pid; do
			if running "$(cat "$p")"; then live=$((live + 1)); fi
		done
		[ "$live" -gt 0 ] || die "the TaskManager exited: $(tail -c 1000 "$run"/log/taskmanager-*.out 2>/dev/null)"
		[ "$(registered "$tm_address")" -ge "$live" ] && return 0
		sleep 1
	done
	die "only $(registered "$tm_address") of $live TaskManagers at $tm_address registered after 180 s; see $run/log"
}

# jobmanager RUN_DIR: the JobManager alone; waits until its REST API answers.
jobmanager() {
	local run=$1 i
	ls "$run"/*.pid >/dev/null 2>&1 && die "$run already has processes (stop them first)"
	classpath >/dev/null
	conf "$run"
	launch "$run" jobmanager org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint -Xmx512m -Xms512m --
	for i in $(seq 120); do
		rest /overview >/dev/null && return 0
		running "$(cat "$run/jobmanager.pid")" || die "the JobManager exited; see $run/log/jobmanager.log"
		sleep 1
	done
	die "the JobManager's REST API did not answer within 120 s; see $run/log"
}

# vendored CLASSPATH grpc|guava: the version package of Beam's vendored
# library on the classpath (v1p60p1, v32_1_2_jre).
vendored() {
	local j
	tr ':' '\n' <<<"$1" | grep -E 'vendor|job-server' | while read -r j; do
		python3 -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' "$j" 2>/dev/null |
			grep -m1 -oE "^org/apache/beam/vendor/$2/v[^/]+" || true
	done | head -1 | sed 's#.*/##'
}

# jobserver RUN_DIR: Beam's Flink job server for the cluster at
# JM_ADDRESS:REST_PORT; waits until it answers.
jobserver() {
	local run=$1 args cp grpc guava i
	local job_host=${JOB_HOST:-127.0.0.1} job_port=${JOB_PORT:-8099}
	[ -e "$run/jobserver.pid" ] && die "$run already has a job server (stop it first)"
	args=$(bash "$here/fetch-jobserver.sh")
	[ -s "$run/conf/flink-conf.yaml" ] || { classpath >/dev/null; conf "$run"; }
	local cmd=(java "${java_opens[@]}" "-Xmx${JOBSERVER_HEAP:-1g}")
	if [ -n "${GCS_ENDPOINT:-}" ]; then
		cp=$(sed -n 's/^-cp //p; s/^-jar //p' "$args")
		grpc=$(vendored "$cp" grpc)
		guava=$(vendored "$cp" guava)
		[ -n "$grpc" ] && [ -n "$guava" ] || die "no vendored gRPC or Guava of Beam's on the job server's classpath"
		sed "s/vendor\.grpc\.v1p60p1/vendor.grpc.$grpc/; s/vendor\.guava\.v32_1_2_jre/vendor.guava.$guava/" \
			"$here/EmulatorJobServer.java" >"$run/EmulatorJobServer.java"
		cmd+=(-cp "$cp" "$run/EmulatorJobServer.java")
	else
		cmd+=("@$args")
	fi
	cmd+=(--job-host="$job_host" --job-port="$job_port" --artifact-port="${ARTIFACT_PORT:-8098}" --expansion-port=0
		--flink-master="$rest_host:$rest_port" --flink-conf-dir="$run/conf" --artifacts-dir="${ARTIFACTS_DIR:-$run/artifacts}")
	(cd "$run" && exec setsid "${cmd[@]}" >"$run/log/jobserver.out" 2>&1) &
	echo $! >"$run/jobserver.pid"
	for i in $(seq 180); do
		(echo >"/dev/tcp/$job_host/$job_port") 2>/dev/null && return 0
		running "$(cat "$run/jobserver.pid")" || die "the job server exited: $(tail -3 "$run/log/jobserver.out")"
		sleep 1
	done
	die "the job server did not answer on $job_host:$job_port within 180 s; see $run/log/jobserver.out"
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

# group_running PGID: a process of group PGID runs (zombies aside).
group_running() {
	local f line st pg
	for f in /proc/[0-9]*/stat; do
		read -r line <"$f" 2>/dev/null || continue
		read -r st _ pg _ <<<"${line##*) }"
		[ "$pg" = "$1" ] && [ "$st" != Z ] && return 0
	done
	return 1
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
		# What it started (process-boot.sh, boot, workers) got the SIGTERM
		# too: give it a moment to end and clean up after itself.
		for _ in $(seq 20); do group_running "$pid" || break; sleep 0.5; done
		kill -KILL -- "-$pid" 2>/dev/null || true
		rm -f "$p"
	done
}

cmd=${1:-}
if [ "$cmd" = classpath ] && [ $# -eq 1 ]; then
	classpath
elif [ "$cmd" = start ] && [ $# -eq 2 ]; then
	start "$2"
elif [ "$cmd" = jobmanager ] && [ $# -eq 2 ]; then
	mkdir -p "$2"
	jobmanager "$(cd "$2" && pwd)"
elif [ "$cmd" = jobserver ] && [ $# -eq 2 ]; then
	mkdir -p "$2"
	jobserver "$(cd "$2" && pwd)"
elif [ "$cmd" = taskmanager ] && [ $# -eq 3 ]; then
	if [ -z "${JM_ADDRESS:-}" ]; then
		run=$(cd "$2" 2>/dev/null && pwd) || die "no run dir $2"
		[ -s "$run/conf/flink-conf.yaml" ] || die "$run has no cluster configuration (run start first)"
	else # a TaskManager on a host of its own
		mkdir -p "$2"
		run=$(cd "$2" && pwd)
		[ -s "$run/conf/flink-conf.yaml" ] || { classpath >/dev/null; conf "$run"; }
	fi
	taskmanager "$run" "$3"
	if [ -e "$run/jobmanager.pid" ]; then
		live=0
		for p in "$run"/taskmanager-*.pid; do
			if running "$(cat "$p")"; then live=$((live + 1)); fi
		done
		wait_registered "$run" "$live"
	else
		wait_here "$run"
	fi
elif [ "$cmd" = stop ] && [ $# -eq 2 ]; then
	stop "$2"
else
	usage
fi
