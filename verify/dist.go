package verify

import (
	"math"

	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
)

// Dist accumulates a distribution of integers; Merge is associative and
// commutative, so it can be combined in any bundle order.
type Dist struct {
	Count, Sum, Min, Max int64
	SumSq                float64
}

// Add records one value.
func (d *Dist) Add(v int64) {
	if d.Count == 0 || v < d.Min {
		d.Min = v
	}
	if d.Count == 0 || v > d.Max {
		d.Max = v
	}
	d.Count++
	d.Sum += v
	d.SumSq += float64(v) * float64(v)
}

// Merge adds o's values.
func (d *Dist) Merge(o Dist) {
	if o.Count == 0 {
		return
	}
	if d.Count == 0 || o.Min < d.Min {
		d.Min = o.Min
	}
	if d.Count == 0 || o.Max > d.Max {
		d.Max = o.Max
	}
	d.Count += o.Count
	d.Sum += o.Sum
	d.SumSq += o.SumSq
}

// Proto returns the distribution as a report message (population stddev).
func (d Dist) Proto() *smoothanonpb.Distribution {
	p := &smoothanonpb.Distribution{Count: d.Count, Sum: d.Sum, Min: d.Min, Max: d.Max}
	if d.Count > 0 {
		p.Mean = float64(d.Sum) / float64(d.Count)
		p.Stddev = math.Sqrt(max(0, d.SumSq/float64(d.Count)-p.Mean*p.Mean))
	}
	return p
}
