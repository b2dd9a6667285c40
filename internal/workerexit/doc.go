// Package workerexit makes a Beam Go SDK worker process end with its job.
//
// A runner with PROCESS or DOCKER environments starts Beam's boot loader,
// which copies the worker binary to /tmp/bin*/worker and runs it with
// --worker=true. Left to Beam (v2.77.0) such a worker never exits: the
// harness prints "Worker exited successfully!" when its control stream ends
// and then sleeps forever, the runner kills only the boot loader, and the
// worker lives on with parent PID 1, together with its copy of the binary.
// On a long-lived Flink cluster every job leaves dozens of them.
//
// Run ends the process when the harness returns, when the parent dies, or
// when the harness fails, and unlinks the boot loader's copy of the binary
// so that its space is freed as soon as the process ends.
package workerexit
