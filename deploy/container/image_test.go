package container

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/smoothanon/smoothanon/release"
	"github.com/smoothanon/smoothanon/storage"
)

// inImage is where the image keeps the launcher (rootfs.sh).
const inImage = "/opt/smoothanon/bin/smoothanon"

// TestImageAsBeamWorker builds the image as `make image` does, then runs
// one input through the pipeline on prism three ways and requires the
// releases to be equal byte for byte: LOOPBACK workers (the reference,
// launched on the host by the binary taken out of the image), EXTERNAL
// workers served by the image as a worker pool (boot --worker_pool, launched
// by the image's own launcher in the pool's network namespace), and DOCKER
// workers that prism, in the image's launcher, starts from the image through
// the Docker API (podman system service). Then the image's launcher
// verifies the release.
func TestImageAsBeamWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("container image test skipped in -short mode")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	// The image runs as user beam (65532); it writes the releases here.
	if err := os.Mkdir(data, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(data, 0o777); err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, dir, data)
	id := fmt.Sprintf("smoothanon-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	image := "localhost/smoothanon-test:" + id[len("smoothanon-test-"):]
	buildImage(t, e, image)
	bin := copyOut(t, e, image, id, dir)

	in := filepath.Join(data, "input.parquet")
	host(t, nil, bin, "gen", "--model", "userlists", "--rows", "3000", "--columns", "2000", "--seed", "1", "--output", in)
	// One pseudonym key for every run (readable by the image's user), so
	// the releases are comparable byte for byte.
	key := filepath.Join(data, "pseudonym.key")
	if err := os.WriteFile(key, []byte(strings.Repeat("3c", 32)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	job := func(out string) []string {
		return []string{"run", "--input", in, "--output", filepath.Join(data, out), "--k", "4",
			"--chunk_size", "1000", "--chunk_key", "hub", "--seed", "1", "--pseudonym_key_file", key}
	}
	host(t, nil, bin, job("loopback")...)
	want := readRelease(t, filepath.Join(data, "loopback"))

	t.Run("external", func(t *testing.T) {
		pool := id + "-pool"
		t.Cleanup(func() { e.quiet("rm", "-f", "-t", "0", pool) })
		// A network namespace of its own (--network none: loopback only):
		// the pool's port 50000 is fixed, and another pool may hold it.
		e.run(t, "run", "-d", "--name", pool, "--network", "none", image, "--worker_pool")
		waitLog(t, e, pool, "Starting worker pool")
		launcher := id + "-launcher"
		t.Cleanup(func() { e.quiet("rm", "-f", "-t", "0", launcher) })
		args := append([]string{"run", "--rm", "--name", launcher, "--network", "container:" + pool,
			"--entrypoint", inImage, image}, job("external")...)
		e.run(t, append(args, "--environment_type", "EXTERNAL", "--environment_config", "localhost:50000",
			"--worker_binary", inImage)...)
		same(t, want, readRelease(t, filepath.Join(data, "external")))
	})

	t.Run("docker", func(t *testing.T) {
		sock := dockerAPI(t, e, dir, image)
		// The launcher runs from the image too, as the workers' user: it
		// creates the staging directory the workers write into. It shares
		// the host's network, as do the workers prism starts (NetworkMode
		// host), and reaches podman through the mounted socket.
		launcher := id + "-docker-launcher"
		t.Cleanup(func() { e.quiet("rm", "-f", "-t", "0", launcher) })
		args := append([]string{"run", "--rm", "--name", launcher, "--network", "host",
			"-v", sock + ":/run/podman.sock", "-e", "DOCKER_HOST=unix:///run/podman.sock",
			"--entrypoint", inImage, image}, job("docker")...)
		e.run(t, append(args, "--environment_type", "DOCKER", "--environment_config", image,
			"--worker_binary", inImage)...)
		same(t, want, readRelease(t, filepath.Join(data, "docker")))
	})

	t.Run("verify", func(t *testing.T) {
		out := e.run(t, "run", "--rm", "--network", "none", "--entrypoint", inImage, image,
			"verify", "--input", in, "--output", filepath.Join(data, "loopback"), "--k", "4",
			"--pseudonym_key_file", key)
		if !regexp.MustCompile(`"valid":\s*true`).MatchString(out) {
			t.Errorf("verify in the image: %s", tail(out))
		}
	})
}

// buildImage runs build-image.sh as `make image` does, and removes the
// image when the test ends.
func buildImage(t *testing.T, e *engine, image string) {
	t.Helper()
	t.Cleanup(func() { e.quiet("rmi", "-f", image) })
	c := exec.Command("bash", "build-image.sh", image)
	c.Env = append(os.Environ(), "ENGINE=podman", "CONTAINERS_CONF="+e.conf)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("build-image.sh %s: %v\n%s", image, err, tail(string(out)))
	}
	if user := strings.TrimSpace(e.run(t, "image", "inspect", "--format", "{{.Config.User}}", image)); user != "65532:65532" {
		t.Errorf("image user %q, want 65532:65532 (not root)", user)
	}
}

// copyOut copies the launcher out of the image into dir: the host runs
// that very binary (static, so it runs anywhere on linux).
func copyOut(t *testing.T, e *engine, image, id, dir string) string {
	t.Helper()
	name := id + "-copy"
	e.run(t, "create", "--name", name, image)
	defer e.quiet("rm", "-f", name)
	bin := filepath.Join(dir, "smoothanon")
	e.run(t, "cp", name+":"+inImage, bin)
	return bin
}

// host runs the binary on the host with env added to the environment.
func host(t *testing.T, env []string, bin string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, bin, args...)
	c.Env = append(os.Environ(), env...)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("smoothanon %s: %v\n%s", strings.Join(args, " "), err, tail(string(out)))
	}
}

// waitLog waits until the container's log (its stdout and stderr) holds s.
func waitLog(t *testing.T, e *engine, name, s string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		log, err := e.cmd(context.Background(), "logs", name).CombinedOutput()
		if err != nil {
			t.Fatalf("podman logs %s: %v\n%s", name, err, tail(string(log)))
		}
		if strings.Contains(string(log), s) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no %q in its log after a minute:\n%s", name, s, tail(string(log)))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// dockerAPI serves the Docker API with podman on a socket in dir until the
// test ends, then removes the containers made from image.
func dockerAPI(t *testing.T, e *engine, dir, image string) string {
	t.Helper()
	sock := filepath.Join(dir, "podman.sock")
	logf, err := os.Create(filepath.Join(dir, "podman-service.log"))
	if err != nil {
		t.Fatal(err)
	}
	svc := e.cmd(context.Background(), "system", "service", "--time=0", "unix://"+sock)
	svc.Stdout, svc.Stderr = logf, logf
	svc.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := svc.Start(); err != nil {
		t.Fatalf("podman system service: %v", err)
	}
	done := make(chan struct{})
	go func() { svc.Wait(); logf.Close(); close(done) }()
	t.Cleanup(func() {
		for _, c := range strings.Fields(e.run(t, "ps", "-aq", "--filter", "ancestor="+image)) {
			e.quiet("rm", "-f", "-t", "0", c)
		}
		syscall.Kill(-svc.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			syscall.Kill(-svc.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			// The launcher container runs as user beam (65532).
			if err := os.Chmod(sock, 0o666); err != nil {
				t.Fatal(err)
			}
			return sock
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logf.Name())
			t.Fatalf("podman system service made no socket %s in a minute:\n%s", sock, tail(string(b)))
		}
	}
}

// readRelease reads every file of a release directory, by its name
// without the run token (release.StagedName).
func readRelease(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		// _SUCCESS holds the run id and report hash, which differ per
		// run; a shard's name carries its run's random token.
		if rel != storage.SuccessName {
			files[release.StagedName(rel)] = b
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("%s: empty release", dir)
	}
	m, err := storage.ReadManifest(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, sh := range m.Shards {
		if _, ok := files[release.StagedName(sh.Name)]; !ok {
			t.Errorf("%s: the manifest lists %s, which is missing", dir, sh.Name)
		}
	}
	return files
}

// same requires got to hold exactly want's files, byte for byte.
func same(t *testing.T, want, got map[string][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d files, want %d (the LOOPBACK release's)", len(got), len(want))
	}
	for name, b := range want {
		if !bytes.Equal(b, got[name]) {
			t.Errorf("%s differs from the LOOPBACK release's (%d vs %d bytes)", name, len(got[name]), len(b))
		}
	}
}
