// Package container holds the smoothanon container image's build files
// (rootfs.sh, build-image.sh, Dockerfile.prebuilt; the multi-stage
// Dockerfile is at the repository root) and the tests that build the image
// and run it as a Beam worker. It has no Go API.
package container
