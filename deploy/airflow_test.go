package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAirflowDAG imports deploy/airflow/smoothanon_nightly.py with Airflow
// and the Apache Beam provider (airflow/check_dag.py), renders its tasks for
// one logical date, and checks the command lines: the Go operator starts
// the smoothanon-run launcher with only flags of `smoothanon run`, --date
// is the logical date, every path carries {date}, no --run_id overrides
// it; linkage runs after it on the same date over the previous night's
// release and this one. Skipped when Airflow is absent (failed under CI,
// which installs it); $PYTHON picks the interpreter (default python3).
func TestAirflowDAG(t *testing.T) {
	py := os.Getenv("PYTHON")
	if py == "" {
		py = "python3"
	}
	const date = "2026-11-23"
	cmd := exec.Command(py, "airflow/check_dag.py", date)
	cmd.Env = append(os.Environ(), "AIRFLOW_HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 3 {
			msg := "Airflow DAG not checked: " + strings.TrimSpace(stderr.String()) +
				" (pip install 'apache-airflow-providers-apache-beam[google]==6.3.1', as .ci/run does)"
			if os.Getenv("CI") != "" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
		t.Fatalf("%s airflow/check_dag.py: %v\n%s", py, err, stderr.String())
	}
	var dag map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &dag); err != nil {
		t.Fatalf("check_dag.py output: %v\n%s", err, stdout.String())
	}
	argv := func(task string) map[string][]string {
		a := strs(dag[task])
		if len(a) == 0 {
			t.Fatalf("the DAG has no task %q: %s", task, stdout.String())
		}
		got := map[string][]string{"": {a[0]}}
		for _, x := range a[1:] {
			name, ok := flagName(x)
			if !ok {
				got["_args"] = append(got["_args"], x)
				continue
			}
			got[name] = append(got[name], strings.TrimPrefix(x, "--"+name+"="))
		}
		return got
	}
	run, link := argv("release"), argv("linkage")
	runFl, linkFl := helpFlags(t, "run"), helpFlags(t, "linkage")
	if got := run[""][0]; filepath.Base(got) != "smoothanon-run" || filepath.Dir(got) != filepath.Dir(launcherPath) {
		t.Errorf("release launcher %s, want %s/smoothanon-run (the binary runs as `run` under that name)", got, filepath.Dir(launcherPath))
	}
	for name := range run {
		if name != "" && !runFl[name] {
			t.Errorf("release passes --%s, not a flag of smoothanon run", name)
		}
	}
	if got := link[""][0]; got != launcherPath || strings.Join(link["_args"], " ") != "linkage" {
		t.Errorf("linkage runs %s %q, want %s linkage", got, link["_args"], launcherPath)
	}
	for name := range link {
		if name != "" && name != "_args" && !linkFl[name] {
			t.Errorf("linkage passes --%s, not a flag of smoothanon linkage", name)
		}
	}
	one := func(m map[string][]string, name string) string {
		if len(m[name]) != 1 {
			t.Errorf("--%s given %d times, want once", name, len(m[name]))
			return ""
		}
		return m[name][0]
	}
	if one(run, "date") != date || one(link, "date") != date {
		t.Errorf("--date: release %q, linkage %q; want the logical date %s", run["date"], link["date"], date)
	}
	if _, ok := run["run_id"]; ok {
		t.Error("release sets --run_id; it must default to the date so a rerun is a no-op")
	}
	for _, name := range []string{"input", "output", "metrics_out", "pseudonym_key_out"} {
		if v := one(run, name); !strings.Contains(v, "{date}") {
			t.Errorf("release --%s=%q has no {date}", name, v)
		}
	}
	out := one(run, "output")
	if want := []string{strings.ReplaceAll(out, "{date}", "{date-1}"), out}; strings.Join(link["release"], " ") != strings.Join(want, " ") {
		t.Errorf("linkage --release %q, want %q", link["release"], want)
	}
	if one(run, "k") != one(link, "k") {
		t.Errorf("release --k=%s, linkage --k=%s", one(run, "k"), one(link, "k"))
	}
	if one(run, "worker_binary") != launcherPath {
		t.Errorf("release --worker_binary=%s, want %s", one(run, "worker_binary"), launcherPath)
	}
	if up := strs(dag["linkage_upstream"]); len(up) != 1 || up[0] != "release" {
		t.Errorf("linkage runs after %q, want [release]", up)
	}
}
