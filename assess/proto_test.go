package assess

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// TestProtoComplete: a Risk and a Point with every field set convert to
// messages with every field set, so a field added to one side and not
// the other fails here.
func TestProtoComplete(t *testing.T) {
	f := Figures{Jaccard: 0.5, Suppressed: 0.2, Created: 0.1, ClassRows: 9}
	r := Risk{Rows: 10, Entries: 30, Features: 7, Degrees: []int64{0, 2, 8}, Unique: 0.4,
		BelowK: []KShare{{K: 8, Share: 0.9}}, Exposing: []FeatureCount{{Feature: 3, Rows: 2, Name: "/sports"}}}
	p := Point{K: 8, ModeName: "smooth", Predicted: f, Low: f, High: f, Chunks: 4, SampleChunks: 2, SampleChunkRows: 100,
		Extrapolated: true, Model: "rate", Backtest: f, Noise: f}
	for _, m := range []proto.Message{r.Proto(), r.Proto().BelowK[0], r.Proto().Exposing[0], p.Proto(), p.Proto().Noise} {
		checkAllSet(t, m.ProtoReflect())
	}
	if got := p.Proto(); got.K != 8 || got.Mode != "smooth" || got.Backtest.ClassRows != 9 || got.SampleChunkRows != 100 {
		t.Errorf("Point.Proto() = %v", got)
	}
}

func checkAllSet(t *testing.T, m protoreflect.Message) {
	t.Helper()
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		if fd := fields.Get(i); !m.Has(fd) {
			t.Errorf("%s.%s not set", m.Descriptor().Name(), fd.Name())
		}
	}
}
