package transforms_test

import (
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/transforms"
)

func init() {
	register.Function1x1(summarize) // a runner finds DoFns by their registered name
}

// summarize states a release's verdict from its merged Stats.
func summarize(st transforms.Stats) string {
	return fmt.Sprintf("%d classes, %d below k, %d majority violations; of %d entries %d kept, %d created",
		st.Classes, st.SmallClasses, st.MajorityViolations, st.EntriesIn, st.Kept, st.Created)
}

// Verify checks a release the way the pipeline does, over the whole
// release at once: users with identical released rows form a class, which
// must hold at least k users, and (smooth mode) each released feature must
// have been held by at least half of its class. Here six users are
// released in two classes of three, checked against k = 2 and k = 4 in
// one pipeline, run by ptest on prism; passert checks each summary.
func ExampleVerify() {
	in, out := matrix.New(6, 16), matrix.New(6, 18)
	for _, r := range []struct {
		user    string
		in, out []uint32
	}{
		{"ana", []uint32{1, 2, 3}, []uint32{1, 2, 3}},
		{"ben", []uint32{1, 2}, []uint32{1, 2, 3}},
		{"cem", []uint32{1, 2, 3, 4}, []uint32{1, 2, 3}},
		{"dee", []uint32{7, 8}, []uint32{7, 8, 9}},
		{"eli", []uint32{7, 8, 9}, []uint32{7, 8, 9}},
		{"fay", []uint32{8, 9}, []uint32{7, 8, 9}},
	} {
		in.Append(r.user, r.in)
		out.Append(r.user, r.out)
	}
	out.Users = in.Users // an OutBlock's two matrices share their users

	p, s := beam.NewPipelineWithRoot()
	released := beam.Create(s, transforms.OutBlock{In: *in, Out: *out})
	noChunks := beam.CreateList(s, []transforms.ChunkStat{})
	want := map[int]string{
		2: "2 classes, 0 below k, 0 majority violations; of 16 entries 15 kept, 3 created",
		4: "2 classes, 2 below k, 0 majority violations; of 16 entries 15 kept, 3 created",
	}
	for _, k := range []int{2, 4} {
		s := s.Scope(fmt.Sprintf("k=%d", k))
		stats := transforms.Verify(s, released, transforms.VerifyParams{K: k, Mode: matrix.Smooth})
		merged := transforms.CombineStats(s, []beam.PCollection{stats}, noChunks)
		passert.Equals(s, beam.ParDo(s, summarize, merged), want[k])
	}
	if err := ptest.Run(p); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("k = 2:", want[2])
	fmt.Println("k = 4:", want[4])
	// Output:
	// k = 2: 2 classes, 0 below k, 0 majority violations; of 16 entries 15 kept, 3 created
	// k = 4: 2 classes, 2 below k, 0 majority violations; of 16 entries 15 kept, 3 created
}
