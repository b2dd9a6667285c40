package experiment

import "math"

// Stat accumulates values for their mean and sample standard deviation.
type Stat struct{ xs []float64 }

// Add records x.
func (s *Stat) Add(x float64) { s.xs = append(s.xs, x) }

// N is the number of values.
func (s *Stat) N() int { return len(s.xs) }

// Mean is the mean, NaN with no values.
func (s *Stat) Mean() float64 {
	t := 0.0
	for _, x := range s.xs {
		t += x
	}
	return t / float64(len(s.xs))
}

// SD is the sample standard deviation, 0 with fewer than two values.
func (s *Stat) SD() float64 {
	if len(s.xs) < 2 {
		return 0
	}
	m, t := s.Mean(), 0.0
	for _, x := range s.xs {
		t += (x - m) * (x - m)
	}
	return math.Sqrt(t / float64(len(s.xs)-1))
}
