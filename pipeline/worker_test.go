package pipeline

import "testing"

func TestIsWorker(t *testing.T) {
	cases := []struct {
		args []string
		want bool
	}{
		{[]string{"--worker=true", "--id=1", "--control_endpoint=localhost:1"}, true},
		{[]string{"-worker", "--id=1"}, true},
		{[]string{"run", "--input", "x"}, false},
		{[]string{"run", "worker"}, false},
		{nil, false},
	}
	for _, c := range cases {
		if got := IsWorker(c.args); got != c.want {
			t.Errorf("IsWorker(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}
