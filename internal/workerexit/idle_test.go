package workerexit

import (
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

func TestIdleTimeout(t *testing.T) {
	for v, want := range map[string]time.Duration{"": 0, "0": 0, "5m": 5 * time.Minute, "1.5s": 1500 * time.Millisecond} {
		if got, err := idleTimeout(v); err != nil || got != want {
			t.Errorf("idleTimeout(%q) = %v, %v; want %v", v, got, err, want)
		}
	}
	for _, v := range []string{"5", "-1s", "soon"} {
		if _, err := idleTimeout(v); err == nil {
			t.Errorf("idleTimeout(%q): no error", v)
		}
	}
}
