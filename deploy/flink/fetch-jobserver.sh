#!/usr/bin/env bash
# Fetch Beam's Flink job server from Maven Central into ~/.m2 and write a java
# argument file that starts it; print the argument file's path.
#
#   java --add-opens=... -Xmx1g @"$(deploy/flink/fetch-jobserver.sh)" \
#        --job-host=127.0.0.1 --job-port=8099 --flink-master='[local]'
#
# .ci/run (through `make test`) calls this before the tests; the Flink
# integration test (pipeline/runners_test.go) reads the argument file from
# $SMOOTHANON_FLINK_JOBSERVER or from the default path below.
#
# Preference:
#  1. Beam's shaded job server jar (org.apache.beam:beam-runners-flink-<F>-job-server)
#     at the Beam version of go.mod, for the newest Flink line F that runs on JDK 17.
#  2. The unshaded runner (org.apache.beam:beam-runners-flink-<F>) with its full
#     dependency closure resolved by Maven, started through its main class
#     org.apache.beam.runners.flink.FlinkJobServerDriver. This is what runs on
#     machines whose Maven Central mirror lacks the shaded jars (ours: none of
#     the *-job-server jars are served, and the newest runner version whose
#     whole closure is served is 2.62.0, Flink 1.19). The portable job API
#     is stable across Beam versions; the integration test checks the Go SDK
#     of go.mod against it byte for byte.
# Override with BEAM_VERSIONS="2.77.0 2.62.0" and FLINK_VERSIONS="1.19".
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
gomod_version=$(awk '$1=="github.com/apache/beam/sdks/v2"{sub(/^v/,"",$2); print $2}' "$root/go.mod")
beam_versions=${BEAM_VERSIONS:-"$gomod_version 2.70.0 2.62.0"}
flink_versions=${FLINK_VERSIONS:-"2.0 1.20 1.19"}
repo=${MAVEN_REPO_LOCAL:-$HOME/.m2/repository}
out=${SMOOTHANON_FLINK_JOBSERVER:-$HOME/.cache/smoothanon/flink-jobserver.args}
timeout_s=${FETCH_TIMEOUT:-900}
main_class=org.apache.beam.runners.flink.FlinkJobServerDriver

command -v mvn >/dev/null || { echo "fetch-jobserver: mvn not found (apt-get install -y maven)" >&2; exit 1; }
command -v java >/dev/null || { echo "fetch-jobserver: java not found (apt-get install -y openjdk-17-jre-headless)" >&2; exit 1; }
mkdir -p "$(dirname "$out")"

# An argument file that is still valid is reused without asking Maven.
if [ -s "$out" ]; then
  ok=1
  for f in $(sed -n 's/^-jar //p; s/^-cp //p' "$out" | tr ':' ' '); do
    [ -s "$f" ] || { ok=0; break; }
  done
  if [ "$ok" = 1 ]; then echo "$out"; exit 0; fi
fi

mvn_q() { timeout "$timeout_s" mvn -B -q -Dmaven.repo.local="$repo" "$@"; }

# 1. Shaded job server jar, at the go.mod version only.
for fv in $flink_versions; do
  artifact="beam-runners-flink-${fv}-job-server"
  jar="$repo/org/apache/beam/$artifact/$gomod_version/$artifact-$gomod_version.jar"
  [ -s "$jar" ] || mvn_q org.apache.maven.plugins:maven-dependency-plugin:3.6.1:get \
    -Dartifact="org.apache.beam:$artifact:$gomod_version" -Dtransitive=false >/dev/null 2>&1 || true
  if [ -s "$jar" ]; then
    printf -- '-jar %s\n' "$jar" > "$out"
    echo "fetch-jobserver: org.apache.beam:$artifact:$gomod_version" >&2
    echo "$out"
    exit 0
  fi
done

# 2. Unshaded runner and its dependency closure.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for bv in $beam_versions; do
  for fv in $flink_versions; do
    cat > "$work/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>smoothanon</groupId><artifactId>flink-jobserver</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.beam</groupId><artifactId>beam-runners-flink-$fv</artifactId><version>$bv</version></dependency>
  </dependencies>
</project>
EOF
    echo "fetch-jobserver: resolving org.apache.beam:beam-runners-flink-$fv:$bv and its dependencies" >&2
    if (cd "$work" && mvn_q dependency:build-classpath -Dmdep.outputFile="$work/cp.txt" >"$work/mvn.log" 2>&1) && [ -s "$work/cp.txt" ]; then
      printf -- '-cp %s\n%s\n' "$(cat "$work/cp.txt")" "$main_class" > "$out"
      echo "fetch-jobserver: org.apache.beam:beam-runners-flink-$fv:$bv ($(tr ':' '\n' < "$work/cp.txt" | wc -l) jars)" >&2
      echo "$out"
      exit 0
    fi
    grep -m1 -o 'Could not [^>]*' "$work/mvn.log" >&2 || true
  done
done
echo "fetch-jobserver: no Flink job server for Beam ($beam_versions) and Flink ($flink_versions) on Maven Central" >&2
exit 1
