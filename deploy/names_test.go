package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// The image layout rootfs.sh makes, which the deploy files name.
const (
	launcherPath = "/opt/smoothanon/bin/smoothanon"
	bootPath     = "/opt/apache/beam/boot"
)

var (
	buildOnce sync.Once
	builtBin  string // smoothanon, built once for the package's tests
	buildErr  error
)

// runFlags builds smoothanon and returns the flags `smoothanon run -h` lists.
func runFlags(t *testing.T) map[string]bool {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "smoothanon-deploy-test-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "smoothanon")
		if out, err := exec.Command("go", "build", "-o", builtBin, "../cmd/smoothanon").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	bin := builtBin
	out, _ := exec.Command(bin, "run", "-h").CombinedOutput()
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  -(\w+)`).FindAllStringSubmatch(string(out), -1) {
		flags[m[1]] = true
	}
	for _, f := range []string{"input", "k", "runner", "worker_binary", "sdk_container_image"} {
		if !flags[f] {
			t.Fatalf("smoothanon run -h lists no --%s; parsed %d flags from:\n%s", f, len(flags), out)
		}
	}
	// The Flex Template launcher starts the binary as smoothanon-run.
	alias := filepath.Join(t.TempDir(), "smoothanon-run")
	if err := os.Symlink(bin, alias); err != nil {
		t.Fatal(err)
	}
	if out, _ := exec.Command(alias, "-h").CombinedOutput(); !strings.Contains(string(out), "-chunk_key") {
		t.Errorf("smoothanon-run -h is not run's help:\n%s", out)
	}
	return flags
}

// flagName returns the name of a --name or --name=value argument.
func flagName(arg string) (string, bool) {
	if !strings.HasPrefix(arg, "-") {
		return "", false
	}
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	return name, true
}

// makeImage is the image `make image` builds (the Makefile's IMAGE).
func makeImage(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^IMAGE \?= (\S+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("Makefile sets no IMAGE ?=")
	}
	return string(m[1])
}

// containers lists the containers of every pod template in the manifests.
func containers(t *testing.T) map[string][]map[string]any {
	t.Helper()
	out := map[string][]map[string]any{}
	for file, objs := range manifests(t) {
		for _, obj := range objs {
			spec, _ := obj["spec"].(map[string]any)
			tmpl, _ := spec["template"].(map[string]any)
			pod, _ := tmpl["spec"].(map[string]any)
			cs, _ := pod["containers"].([]any)
			for _, c := range cs {
				out[file] = append(out[file], c.(map[string]any))
			}
		}
	}
	return out
}

func strs(v any) []string {
	var out []string
	for _, x := range asSlice(v) {
		out = append(out, x.(string))
	}
	return out
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

// TestKubernetesNamesExist checks what the manifests name: the smoothanon
// image is `make image`'s, the worker pool sidecar runs boot --worker_pool
// as the container test does, the launcher is the image's binary and
// passes only flags `smoothanon run` has, with EXTERNAL workers on the
// sidecar, and the Flink image matches the job server's Flink version.
func TestKubernetesNamesExist(t *testing.T) {
	flags := runFlags(t)
	image := makeImage(t)
	var pools, launchers int
	flinkVersions := map[string]bool{}
	for file, cs := range containers(t) {
		for _, c := range cs {
			img := c["image"].(string)
			args := strs(c["args"])
			switch {
			case strings.HasPrefix(img, "flink:"):
				flinkVersions[strings.SplitN(strings.TrimPrefix(img, "flink:"), "-", 2)[0]] = true
			case strings.HasPrefix(img, "apache/beam_flink"):
				v := regexp.MustCompile(`beam_flink([0-9.]+)_job_server`).FindStringSubmatch(img)
				if v == nil {
					t.Errorf("%s: job server image %s names no Flink version", file, img)
					continue
				}
				flinkVersions[v[1]] = true
			case img == image && c["command"] == nil:
				pools++
				if strings.Join(args, " ") != "--worker_pool" {
					t.Errorf("%s: worker pool %v args %q, want [--worker_pool] (boot's flag, as deploy/container tests it)", file, c["name"], args)
				}
			case img == image:
				launchers++
				if cmd := strs(c["command"]); len(cmd) != 1 || cmd[0] != launcherPath || len(args) == 0 || args[0] != "run" {
					t.Errorf("%s: launcher %v runs %q %q, want [%s] [run ...]", file, c["name"], cmd, args, launcherPath)
					continue
				}
				got := map[string]string{}
				for _, a := range args[1:] {
					name, ok := flagName(a)
					if !ok || !flags[name] {
						t.Errorf("%s: %q is not a flag of smoothanon run", file, a)
					}
					got[name] = strings.TrimPrefix(a, "--"+name+"=")
				}
				for name, want := range map[string]string{"runner": "flink", "environment_type": "EXTERNAL",
					"environment_config": "localhost:50000", "worker_binary": launcherPath} {
					if got[name] != want {
						t.Errorf("%s: --%s=%q, want %q", file, name, got[name], want)
					}
				}
			default:
				t.Errorf("%s: container %v runs image %s: neither %s (make image) nor Flink's", file, c["name"], img, image)
			}
		}
	}
	if pools == 0 || launchers == 0 {
		t.Errorf("%d worker pool sidecars and %d launchers, want both", pools, launchers)
	}
	if len(flinkVersions) != 1 {
		t.Errorf("Flink versions %v: the cluster and the job server must agree", flinkVersions)
	}
}

// TestFlexTemplateNamesExist checks the Flex Template: every parameter is
// a flag of `smoothanon run`, the launcher image installs the image's
// binary as FLEX_TEMPLATE_GO_BINARY under the name smoothanon-run, and
// the worker_binary parameter accepts exactly that path.
func TestFlexTemplateNamesExist(t *testing.T) {
	flags := runFlags(t)
	var meta struct {
		Parameters []struct {
			Name    string   `json:"name"`
			Regexes []string `json:"regexes"`
		} `json:"parameters"`
	}
	b, err := os.ReadFile("dataflow/metadata.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	df, err := os.ReadFile("dataflow/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	env := regexp.MustCompile(`(?m)^ENV FLEX_TEMPLATE_GO_BINARY=(\S+)$`).FindSubmatch(df)
	cp := regexp.MustCompile(`(?m)^COPY --from=smoothanon (\S+) (\S+)$`).FindSubmatch(df)
	arg := regexp.MustCompile(`(?m)^ARG IMAGE=(\S+)$`).FindSubmatch(df)
	switch {
	case env == nil || cp == nil || arg == nil:
		t.Fatalf("dataflow/Dockerfile lacks ARG IMAGE=, COPY --from=smoothanon or ENV FLEX_TEMPLATE_GO_BINARY=")
	case string(cp[1]) != launcherPath:
		t.Errorf("launcher image copies %s, the image's binary is %s", cp[1], launcherPath)
	case string(cp[2]) != string(env[1]) || filepath.Base(string(env[1])) != "smoothanon-run":
		t.Errorf("FLEX_TEMPLATE_GO_BINARY=%s, the binary is copied to %s; want both .../smoothanon-run", env[1], cp[2])
	case string(arg[1]) != makeImage(t):
		t.Errorf("ARG IMAGE=%s, make image builds %s", arg[1], makeImage(t))
	}
	seen := map[string]bool{}
	for _, p := range meta.Parameters {
		if !flags[p.Name] {
			t.Errorf("metadata.json parameter %q is not a flag of smoothanon run", p.Name)
		}
		seen[p.Name] = true
		if p.Name == "worker_binary" && env != nil {
			for _, re := range p.Regexes {
				if !regexp.MustCompile(re).MatchString(string(env[1])) {
					t.Errorf("worker_binary regex %s rejects %s", re, env[1])
				}
			}
		}
	}
	for _, need := range []string{"input", "output", "k", "worker_binary", "sdk_container_image"} {
		if !seen[need] {
			t.Errorf("metadata.json has no parameter %q", need)
		}
	}
}
