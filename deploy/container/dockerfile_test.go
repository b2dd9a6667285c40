package container

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDockerfilesAgree checks what the image tests cannot run here (no Go
// base image without a registry): the multi-stage ../../Dockerfile pins
// go.mod's Go version, and its last stage is Dockerfile.prebuilt's — the
// image the tests build and run — line for line after the COPY of the
// root filesystem.
func TestDockerfilesAgree(t *testing.T) {
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	gomod := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(read("../../go.mod"))
	root := read("../../Dockerfile")
	pin := regexp.MustCompile(`(?m)^ARG GO_VERSION=(\S+)$`).FindStringSubmatch(root)
	if gomod == nil || pin == nil || gomod[1] != pin[1] {
		t.Errorf("Dockerfile ARG GO_VERSION %v, go.mod's go line %v: keep them equal", pin, gomod)
	}
	for _, want := range []string{"ARG TARGETARCH", "GOARCH=$TARGETARCH", "CGO_ENABLED=0", "-trimpath", "-ldflags='-s -w'",
		"github.com/apache/beam/sdks/v2/go/container", "deploy/container/rootfs.sh"} {
		if !strings.Contains(root, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	a, b := lastStage(t, root), lastStage(t, read("Dockerfile.prebuilt"))
	if a != b {
		t.Errorf("last stages differ after the COPY:\nDockerfile:\n%s\nDockerfile.prebuilt:\n%s", a, b)
	}
	if !strings.Contains(a, "USER 65532:65532\nWORKDIR /tmp\nENTRYPOINT [\"/opt/apache/beam/boot\"]") {
		t.Errorf("last stage is not user 65532 in /tmp with boot as entrypoint:\n%s", a)
	}
}

// lastStage returns the instructions after the last stage's COPY line.
func lastStage(t *testing.T, dockerfile string) string {
	t.Helper()
	i := strings.LastIndex(dockerfile, "\nFROM scratch\n")
	if i < 0 {
		t.Fatal("no FROM scratch stage")
	}
	var out []string
	copied := false
	for _, l := range strings.Split(dockerfile[i+1:], "\n") {
		switch {
		case strings.HasPrefix(l, "COPY "):
			copied = true
		case copied && strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "#"):
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
