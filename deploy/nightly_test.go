package deploy

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// helpFlags returns the flags `smoothanon CMD -h` lists.
func helpFlags(t *testing.T, cmd string) map[string]bool {
	t.Helper()
	runFlags(t) // builds the binary
	out, _ := exec.Command(builtBin, cmd, "-h").CombinedOutput()
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  -(\w+)`).FindAllStringSubmatch(string(out), -1) {
		flags[m[1]] = true
	}
	if !flags["date"] || !flags["k"] {
		t.Fatalf("smoothanon %s -h lists no --date or --k:\n%s", cmd, out)
	}
	return flags
}

// TestNightlyCronJobNames checks deploy/kubernetes/nightly-cronjob.yaml
// (its schema is checked with the other manifests): the init container
// runs `smoothanon run --date` with date-templated bucket paths and the
// run id left to default to the date, the container then runs `smoothanon
// linkage` on the same date over the previous night's release and this
// one, both from `make image`'s image and with only flags the commands
// list.
func TestNightlyCronJobNames(t *testing.T) {
	const file = "kubernetes/nightly-cronjob.yaml"
	objs := manifests(t)[file]
	if len(objs) != 1 || objs[0]["kind"] != "CronJob" {
		t.Fatalf("%s: want one CronJob, got %d objects", file, len(objs))
	}
	pod := objs[0]["spec"].(map[string]any)["jobTemplate"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	inits, main := asSlice(pod["initContainers"]), asSlice(pod["containers"])
	if len(inits) != 1 || len(main) != 1 {
		t.Fatalf("%s: %d init containers and %d containers, want 1 and 1 (run, then linkage)", file, len(inits), len(main))
	}
	image := makeImage(t)
	parse := func(c map[string]any, cmd string) map[string][]string {
		flags := helpFlags(t, cmd)
		args := strs(c["args"])
		if img := c["image"]; img != image {
			t.Errorf("%s: %v runs image %v, make image builds %s", file, c["name"], img, image)
		}
		if command := strs(c["command"]); len(command) != 1 || command[0] != launcherPath || len(args) == 0 || args[0] != cmd {
			t.Fatalf("%s: %v runs %q %q, want [%s] [%s ...]", file, c["name"], command, args, launcherPath, cmd)
		}
		got := map[string][]string{}
		for _, a := range args[1:] {
			name, ok := flagName(a)
			if !ok || !flags[name] || !strings.HasPrefix(a, "--"+name+"=") {
				t.Errorf("%s: %q is not a --flag=value of smoothanon %s", file, a, cmd)
				continue
			}
			got[name] = append(got[name], strings.TrimPrefix(a, "--"+name+"="))
		}
		return got
	}
	run := parse(inits[0].(map[string]any), "run")
	link := parse(main[0].(map[string]any), "linkage")
	one := func(m map[string][]string, name string) string {
		if len(m[name]) != 1 {
			t.Errorf("%s: --%s given %d times, want once", file, name, len(m[name]))
			return ""
		}
		return m[name][0]
	}
	if d := one(run, "date"); d != "yesterday" || one(link, "date") != d {
		t.Errorf("%s: run --date=%q, linkage --date=%q; want both yesterday", file, d, one(link, "date"))
	}
	if _, ok := run["run_id"]; ok {
		t.Errorf("%s: run sets --run_id; it must default to the date so a rerun is a no-op", file)
	}
	for _, name := range []string{"input", "output", "metrics_out", "pseudonym_key_out"} {
		if v := one(run, name); !strings.Contains(v, "{date}") {
			t.Errorf("%s: run --%s=%q has no {date}", file, name, v)
		}
	}
	out := one(run, "output")
	if want := []string{strings.ReplaceAll(out, "{date}", "{date-1}"), out}; strings.Join(link["release"], " ") != strings.Join(want, " ") {
		t.Errorf("%s: linkage --release %q, want %q (the previous night, then this one)", file, link["release"], want)
	}
	if one(run, "k") != one(link, "k") {
		t.Errorf("%s: run --k=%s, linkage --k=%s", file, one(run, "k"), one(link, "k"))
	}
	if one(run, "runner") != "dataflow" || one(run, "worker_binary") != launcherPath {
		t.Errorf("%s: run --runner=%s --worker_binary=%s, want dataflow and %s", file, one(run, "runner"), one(run, "worker_binary"), launcherPath)
	}
}
