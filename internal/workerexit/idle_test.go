package workerexit

import (
	"strings"
	"testing"
	"time"
)

func TestIdleWatch(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := newIdleWatch(t0)
	if got := w.idleFor(t0.Add(time.Minute)); got != time.Minute {
		t.Errorf("idle %v before any instruction, want 1m", got)
	}
	w.received("1", t0.Add(time.Minute))
	w.received("2", t0.Add(time.Minute))
	if got := w.idleFor(t0.Add(time.Hour)); got != 0 {
		t.Errorf("idle %v with instructions outstanding, want 0", got)
	}
	w.answered("2", t0.Add(2*time.Minute))
	if got := w.idleFor(t0.Add(time.Hour)); got != 0 {
		t.Errorf("idle %v with instruction 1 outstanding, want 0", got)
	}
	w.answered("1", t0.Add(3*time.Minute))
	if got := w.idleFor(t0.Add(5 * time.Minute)); got != 2*time.Minute {
		t.Errorf("idle %v two minutes after the last answer, want 2m", got)
	}
}

func TestTimeout(t *testing.T) {
	for v, want := range map[string]time.Duration{"": 0, "0": 0, "5m": 5 * time.Minute, "1.5s": 1500 * time.Millisecond} {
		if got, err := timeout(StallExitEnv, v); err != nil || got != want {
			t.Errorf("timeout(%q) = %v, %v; want %v", v, got, err, want)
		}
	}
	for _, v := range []string{"5", "-1s", "soon"} {
		if _, err := timeout(StallExitEnv, v); err == nil || !strings.Contains(err.Error(), StallExitEnv) {
			t.Errorf("timeout(%q): error %v, want one naming %s", v, err, StallExitEnv)
		}
	}
}

// TestVerdict: the idle exit ends a worker with nothing outstanding; the
// stall exit one whose outstanding instruction saw neither traffic nor
// CPU use for its time; neither fires while the other's condition holds.
func TestVerdict(t *testing.T) {
	t0 := time.Unix(1000, 0)
	const idle, stall = 15 * time.Second, 30 * time.Second
	for _, tc := range []struct {
		name string
		at   time.Duration // when the verdict is asked, after t0
		set  func(w *idleWatch)
		want string // substring of the verdict; "" for none
	}{
		{"fresh", 10 * time.Second, func(*idleWatch) {}, ""},
		{"idle", 16 * time.Second, func(*idleWatch) {}, IdleExitEnv},
		{"idle off", 16 * time.Second, nil, ""},
		{"answered then idle", 40 * time.Second, func(w *idleWatch) {
			w.received("1", t0)
			w.answered("1", t0.Add(20*time.Second))
		}, IdleExitEnv},
		{"bundle computing", 10 * time.Minute, func(w *idleWatch) {
			w.received("1", t0)
			w.worked(t0.Add(599 * time.Second))
		}, ""},
		{"bundle reading", 10 * time.Minute, func(w *idleWatch) {
			w.received("1", t0)
			w.message(t0.Add(590 * time.Second))
		}, ""},
		{"bundle stalled", 40 * time.Second, func(w *idleWatch) {
			w.received("1", t0)
			w.message(t0.Add(5 * time.Second))
			w.worked(t0.Add(9 * time.Second))
		}, StallExitEnv},
		{"bundle stalled, not yet", 38 * time.Second, func(w *idleWatch) {
			w.received("1", t0)
			w.worked(t0.Add(9 * time.Second))
		}, ""},
		{"one of two answered", time.Hour, func(w *idleWatch) {
			w.received("1", t0)
			w.received("2", t0)
			w.answered("2", t0.Add(time.Minute))
			w.worked(t0.Add(time.Hour - time.Second))
		}, ""},
	} {
		w := newIdleWatch(t0)
		idle, stall := idle, stall
		if tc.set == nil {
			idle = 0
		} else {
			tc.set(w)
		}
		got := w.verdict(t0.Add(tc.at), idle, stall)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: verdict %q, want one naming %q", tc.name, got, tc.want)
		}
	}
}
