#!/usr/bin/env bash
# Fetch Beam's Flink job server jar from Maven Central into ~/.m2 and print
# its path. .ci/run calls this before `make test`; the Flink integration
# test (pipeline/flink_test.go) finds the jar in ~/.m2 or in
# $SMOOTHANON_FLINK_JOBSERVER.
#
# Pinned to the Beam version of go.mod. Beam 2.77.0 publishes job servers
# for Flink 1.19, 1.20, 2.0, 2.1 and 2.2 (PUBLISHED_FLINK_VERSIONS in the
# SDK); 2.2 is the newest line and runs on JDK 17. Override with
# FLINK_VERSION=... or BEAM_VERSION=...; FLINK_VERSION may be a
# space-separated preference list.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
beam_version=${BEAM_VERSION:-$(awk '$1=="github.com/apache/beam/sdks/v2"{sub(/^v/,"",$2); print $2}' "$root/go.mod")}
flink_versions=${FLINK_VERSION:-"2.2 2.1 2.0 1.20"}
repo=${MAVEN_REPO_LOCAL:-$HOME/.m2/repository}
timeout_s=${FETCH_TIMEOUT:-900}

command -v mvn >/dev/null || { echo "fetch-jobserver: mvn not found (apt-get install -y maven)" >&2; exit 1; }
command -v java >/dev/null || { echo "fetch-jobserver: java not found (apt-get install -y openjdk-17-jre-headless)" >&2; exit 1; }

for fv in $flink_versions; do
  artifact="beam-runners-flink-${fv}-job-server"
  jar="$repo/org/apache/beam/$artifact/$beam_version/$artifact-$beam_version.jar"
  if [ -s "$jar" ]; then
    echo "$jar"
    exit 0
  fi
  echo "fetch-jobserver: fetching org.apache.beam:$artifact:$beam_version from Maven Central" >&2
  if timeout "$timeout_s" mvn -B -q -U -Dmaven.repo.local="$repo" \
      org.apache.maven.plugins:maven-dependency-plugin:3.6.1:get \
      -Dartifact="org.apache.beam:$artifact:$beam_version" -Dtransitive=false >&2 && [ -s "$jar" ]; then
    echo "$jar"
    exit 0
  fi
  echo "fetch-jobserver: org.apache.beam:$artifact:$beam_version not available" >&2
done
echo "fetch-jobserver: no Flink job server jar for Beam $beam_version (tried Flink $flink_versions)" >&2
exit 1
