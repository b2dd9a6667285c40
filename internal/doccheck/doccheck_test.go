package doccheck

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// The rules, in one place.
//
// Go comments say what the code does and why, and cite the decision
// record that holds the measurements behind a choice
// ("see docs/decisions/014-swap-pass.md"). A figure measured on some day
// ("took 2.3 s", "35% faster", "1.59 GB at 1e7", "was 300 s") goes stale
// with the next change and cannot be re-checked from the comment, so it
// belongs in the record, stamped with its day and commit. A constant's
// own meaning ("every 200 ms", "64 KiB", "at most 0.1% of the users") is
// not a measurement: it has a number and a unit but none of the words or
// data-set names that mark a measurement, so the rules let it pass.
//
// A comment fails when one of its sentences matches a rule: the rule's
// pattern matches and, for rules with a cue, so does the cue somewhere in
// the same sentence. TestRulesCatchOriginals holds the comment lines the
// rules were written against; TestRulesAllowConstants holds what they
// must let pass.
var rules = []struct {
	name    string
	pattern *regexp.Regexp
	cue     *regexp.Regexp // nil: the pattern alone fails the sentence
}{
	{
		// A time, size or rate next to a word that reports a run: "took
		// 2.3 s", "1.59 GB at 1e7", "was 300 s", "~150 MB", "0.4 → 0.1 s".
		name:    "a time, size or rate from a run",
		pattern: regexp.MustCompile(`(?:^|[^\w.,])[~≈]?\s?` + number + `(?:\s?[–-]\s?` + number + `)?\s?(?:ns|µs|us|ms|s|min|minutes?|seconds?|hours?|CPU-s|CPU-seconds?|core-hours?|[KMGT]i?B|B/row|rows/s)\b|(?i:\b(?:a|an|one|two|ten) (?:nanosecond|microsecond|millisecond|minute|hour)s?\b)`),
		cue:     regexp.MustCompile(`(?i)\b(?:took|takes|measured|faster|slower|was|were|ran|spent|spends|saved|saves|gained|gains|lost|loses|medians?|peak(?:s|ed)?|profiles?)\b|→|->|` + dataSet + `|~\s?\d|≈\s?\d|\babout (?:a|\d)`),
	},
	{
		// A comparison read off runs: "the 1e7-row run used less memory",
		// "KNearest was measurably slower".
		name:    "a comparison from a run",
		pattern: regexp.MustCompile(`(?i)\b(?:less|more) (?:memory|time|CPU)\b|\b(?:faster|slower)\b`),
		cue:     regexp.MustCompile(`(?i)\bmeasurabl[ey]\b|\bruns?\b|` + dataSet),
	},
	{
		// A Jaccard result on a data set: "on dblp the Jaccard rises with
		// the rounds", "on dblp it loses the least Jaccard".
		name:    "a Jaccard result on a data set",
		pattern: regexp.MustCompile(`(?i)\bJaccard\b[^.]*\b(?:rises|rose|falls|fell|stays flat|gains?|gained|loses|lost)\b|\b(?:rises|rose|falls|fell|gains?|gained|loses|lost)\b[^.]*\bJaccard\b`),
		cue:     regexp.MustCompile(dataSet),
	},
	{
		// A speed ratio: "1.6× faster", "beat ... by 1.6×".
		name:    "a speed ratio",
		pattern: regexp.MustCompile(`\d(?:\.\d+)?\s?[×x](?:\s|$|[,.;)])`),
		cue:     regexp.MustCompile(`(?i)\b(?:faster|slower|beat|beats|speed|time|CPU|than)\b`),
	},
	{
		// A share of the time: "a quarter of the solve's CPU", "a tenth
		// more time", "about half the time", "30 times the time".
		name:    "a share of the time",
		pattern: regexp.MustCompile(`(?i)\b(?:half|third|quarter|fifth|tenth)s?\s+(?:of\s+)?(?:the\s+|a\s+|its\s+)?(?:solve|time|CPU|wall)\b|\b(?:half|third|quarter|fifth|tenth)\s+more\s+time\b|\b\d+\s+times\s+the\s+time\b`),
	},
	{
		// A percentage that reports a gain or a cost: "35% faster",
		// "gained 0.4% of the Jaccard". A threshold ("0.1% of the users")
		// has no such word.
		name:    "a percentage gained or lost",
		pattern: regexp.MustCompile(`\d(?:\.\d+)?\s?%`),
		cue:     regexp.MustCompile(`(?i)\b(?:faster|slower|gained|gains|lost|loses|saved|saves)\b|\bof the (?:time|solve|CPU|Jaccard|wall)\b`),
	},
	{
		// Jaccard points won or lost: "0.16 Jaccard points", "0.2–0.35
		// points". Whole numbers of points ("2,048 points") are the
		// solver's points, not Jaccard.
		name:    "Jaccard points",
		pattern: regexp.MustCompile(`(?i)[+−-]?\d+\.\d+(?:\s?[–-]\s?\d+\.\d+)?\s+(?:Jaccard\s+)?points?\b|\d+(?:\.\d+)?\s+Jaccard\s+points?\b`),
	},
	{
		// docs/performance.md holds today's figures and changes with every
		// run; a comment cites the decision record instead.
		name:    "a pointer into docs/performance.md",
		pattern: regexp.MustCompile(`performance\.md`),
	},
}

// number is a number as written in prose: 7, 0.16, 2,048 or 1,070.5.
const number = `(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)`

// dataSet names what measurements are made on: the data sets, generated
// user lists, a scale such as 1e7 or a 1e5-row chunk.
const dataSet = `(?i:\b(?:dblp|adult|playstore|SBM)\b|\buser lists\b|\b1e[4-9]\b)`

// maxPerformanceBytes bounds docs/performance.md: it is a reference of
// today's figures, the targets that reproduce them and the cost model,
// short enough to read in one sitting; history goes to docs/decisions/.
const maxPerformanceBytes = 12000

// citation matches a cited decision record, from a comment
// ("docs/decisions/007-write-runs.md") or a document ("decisions/007-…").
var citation = regexp.MustCompile(`decisions/(\d{3}-[A-Za-z0-9._-]+?\.md)`)

// recordName is the file name of a decision record.
var recordName = regexp.MustCompile(`^(\d{3})-[a-z0-9-]+\.md$`)

// A finding is a sentence of a comment that breaks a rule; at is the
// sentence's byte offset in the text given to measurements.
type finding struct {
	rule, sentence string
	at             int
}

// measurements returns the sentences of text (a comment's lines joined by
// spaces) that break a rule, one finding per rule broken.
func measurements(text string) []finding {
	var out []finding
	for _, s := range sentences(text) {
		for _, r := range rules {
			if r.pattern.MatchString(s.sentence) && (r.cue == nil || r.cue.MatchString(s.sentence)) {
				out = append(out, finding{r.name, s.sentence, s.at})
			}
		}
	}
	return out
}

// sentences splits text after '.', ';', ':', '!' or '?' followed by a
// space, so "0.16" stays whole and a rule's cue must sit in the sentence
// of its figure.
func sentences(text string) []finding {
	var out []finding
	start := 0
	for i := 0; i <= len(text); i++ {
		if i == len(text) || i+1 < len(text) && strings.IndexByte(".;:!?", text[i]) >= 0 && text[i+1] == ' ' {
			end := min(i+1, len(text))
			out = append(out, finding{sentence: strings.TrimSpace(text[start:end]), at: start})
			start = end
		}
	}
	return out
}

// root is the repository's root: the nearest directory above this one
// holding go.mod.
func root(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = up
	}
}

// walk calls fn for every file under root whose name ends in one of
// suffixes, skipping hidden directories, testdata and build output.
func walk(t *testing.T, root string, fn func(path string), suffixes ...string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "out" || name == "bin" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		for _, s := range suffixes {
			if strings.HasSuffix(name, s) {
				fn(path)
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNoMeasurementsInComments: no comment of a non-test, non-generated Go
// file quotes a measured figure or points into docs/performance.md.
func TestNoMeasurementsInComments(t *testing.T) {
	r := root(t)
	walk(t, r, func(path string) {
		if strings.HasSuffix(path, "_test.go") || strings.HasSuffix(path, ".pb.go") {
			return
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(r, path)
		for _, g := range f.Comments {
			// The comment's lines joined by spaces, and where each starts.
			var text strings.Builder
			var starts, lines []int
			for _, c := range g.List {
				if strings.HasPrefix(c.Text, "//go:") || strings.HasPrefix(c.Text, "//line ") {
					continue
				}
				body := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(c.Text, "//"), "/*"), "*/")
				for i, l := range strings.Split(body, "\n") {
					starts = append(starts, text.Len())
					lines = append(lines, fset.Position(c.Pos()).Line+i)
					text.WriteString(strings.TrimSpace(l))
					text.WriteByte(' ')
				}
			}
			for _, m := range measurements(text.String()) {
				line := lines[sort.SearchInts(starts, m.at+1)-1]
				t.Errorf("%s:%d: %s in a comment: %q\n\tmove the figure to a decision record (docs/decisions/) and cite it by number",
					rel, line, m.rule, m.sentence)
			}
		}
	}, ".go")
}

// TestRulesCatchOriginals: each comment below, as it stood before the
// rules existed (issue 41), breaks a rule.
func TestRulesCatchOriginals(t *testing.T) {
	for _, text := range originals {
		if len(measurements(text)) == 0 {
			t.Errorf("no rule catches %q", text)
		}
	}
}

// originals are the comments of the tree before issue 41 that quoted
// measurements or pointed into docs/performance.md (file and line then).
var originals = []string{
	// solver/core.go:146
	"Sorting the pairs beat a hash table of counts by 1.6× on playstore, whose table probes missed the cache.",
	// solver/fmap.go:4
	"a positive count, for the per-cluster counts of refine (Go maps were a fifth of the solve time on dblp).",
	// solver/improve.go:26
	"The clusters as they are, refined without split, were a candidate too until the dissolve pass: since then they never won on adult, SBM, dblp (10 seeds, both modes) or generated user lists, and cost about a quarter of the solve's CPU.",
	// solver/resolve.go:15
	"Solved on their own, their neighbourhoods, facility costs and candidate clusterings are their own, and many of them form clusters that keep features (on dblp about +0.5 Jaccard points, for about a tenth more time).",
	// solver/swap.go:12
	"Trying every member instead gained 0.16 Jaccard points on dblp (four passes each; adult and the SBM: nothing) in 30 times the time.",
	// solver/swap.go:19
	"A whole pass costs about a third of a solve: on power-law user lists it gained 0.4% of the Jaccard, on dblp 7%.",
	// solver/swap.go:39
	"On dblp a second swap pass gained 0.26 Jaccard points (the first 2.4) for about the first one's time.",
	// solver/solver.go:101
	"Where the Mondrian candidate would have won anyway, as on the chunks of generated power-law user lists, the release is as good as StartBoth's (not the same bytes: the two starts' bounded neighbour searches differ), in about half the time.",
	// solver/internal/knn/facilities.go:421
	"A query costs about a microsecond on a million user lists, well over a memory access, so short leads suffice; longer ones let the lines fall out of the near caches again.",
	// transforms/block.go:34
	"Per element costs are negligible at 8,192 rows already, and the 1e7-row embedded-Flink run used less memory with these blocks than with 65,536-row ones.",
	// transforms/chunk.go:264
	"On dblp (3 chunks of 1e5 rows, spectral key) this keeps 0.2–0.35 Jaccard points that cutting at the quantiles loses, a quarter of the gap to a whole solve.",
	// transforms/solve.go:152
	"so a process solves GOMAXPROCS/Workers chunks at a time: more would only add memory (a 1e5-row chunk holds ~150 MB while it is solved) and contention.",
	// transforms/spectral.go:14
	"On dblp (3 chunks of ~1e5 rows) the Jaccard of the chunked release rises with the rounds up to about 10 and stays flat to 40.",
	// internal/workerexit/doc.go:8
	"the runner kills only the boot loader, and the worker lives on with parent PID 1, together with its ~200 MB copy.",
	// The eight pointers into docs/performance.md.
	"On generated user lists the Jaccard is the exact one's (docs/performance.md).",                                                                                                       // solver/solver.go:85
	"The bounds of Bounded, in index entries per query, chosen on generated user lists (docs/performance.md):",                                                                            // solver/solver.go:135
	"both give the same release; the load at which they cost the same is in docs/performance.md).",                                                                                        // solver/solver.go:422
	"in non-smooth mode, where a kept feature must be held by every member, they still empty clusters the moves could not (docs/performance.md has the figures).",                         // solver/refine.go:18
	"breaking ties by lowest row instead (knn.Facilities' default) scatters them and lowers the improved smooth Jaccard markedly (docs/performance.md).",                                  // solver/meyerson.go:24
	"with one entry type and verify, refresh and the entry loop as shared searcher methods, KNearest was measurably slower (docs/performance.md), and this is the solver's hottest code.", // solver/internal/knn/openlists.go:190
	"On dblp it loses the least Jaccard against a whole-data solve of the keys, the hub key and plain MinHash more (docs/performance.md).",                                                // transforms/signature.go:34
	"On dblp this brings the pipeline's Jaccard closer to a whole-data solve's, with few chunks and with many, where an unclamped round loses (docs/performance.md).",                     // transforms/sharpen.go:18
	// The kinds of figure the issue names.
	"the merge takes 2.3 s",
	"this is 35% faster than a map",
	"1.59 GB at 1e7",
	"was 300 s",
}

// TestRulesAllowConstants: a constant's own meaning, and the counts and
// thresholds the code is made of, break no rule.
func TestRulesAllowConstants(t *testing.T) {
	for _, text := range []string{
		"one status line on w at most every 200 ms, and whenever a stage completes.",
		"Blocks of 64 KiB are read at a time.",
		"the Flink runner's inbound queue holds messages of up to 4 MB): a block of 131,072 entries encodes to well under 1 MB.",
		"A core offered costs 16 bytes while its level is sorted, so a level holds at most 64 MB.",
		"Every operation fails within 3·Timeout + 10 s, with one line naming the URI that did not answer.",
		"Workers exit after 15 s without an instruction.",
		"Stop when a pass moved fewer than 0.1% of the users (later passes gain too little).",
		"the share of the coordinate's variance carried by its top 1% of rows.",
		"The swaps of a block of 2,048 points are weighed at once.",
		"refine also tries the clusters of each point's 4 nearest points.",
		"ChunkSize by about 1/sqrt(DefaultSamplesPerChunk) ≈ 9% (more with few chunks).",
		"sort buffer (10 MB on a 2-slot TaskManager with 768 MB managed memory).",
		"and distinct² × ⌈columns/64⌉ ≤ 4e9 (adult): XOR + popcount brute force.",
		"Users no cluster could serve end up together in clusters with empty centres: on dblp a fifth of the users.",
		"see docs/decisions/014-swap-pass.md",
	} {
		if m := measurements(text); len(m) > 0 {
			t.Errorf("%q breaks %q", text, m[0].rule)
		}
	}
}

// TestDecisionCitationsExist: every decision record cited in a Go file, a
// Markdown file, a shell script or the Makefile exists.
func TestDecisionCitationsExist(t *testing.T) {
	r := root(t)
	dir := filepath.Join(r, "docs", "decisions")
	walk(t, r, func(path string) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(r, path)
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range citation.FindAllStringSubmatch(line, -1) {
				if _, err := os.Stat(filepath.Join(dir, m[1])); err != nil {
					t.Errorf("%s:%d cites docs/decisions/%s, which does not exist", rel, i+1, m[1])
				}
			}
		}
	}, ".go", ".md", ".sh", "Makefile")
}

// TestDecisionIndex: records are named NNN-title.md with distinct numbers,
// and the index, docs/decisions/README.md, links every one.
func TestDecisionIndex(t *testing.T) {
	dir := filepath.Join(root(t), "docs", "decisions")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	index, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, e := range entries {
		if e.Name() == "README.md" {
			continue
		}
		m := recordName.FindStringSubmatch(e.Name())
		if m == nil {
			t.Errorf("docs/decisions/%s: want NNN-lower-case-title.md", e.Name())
			continue
		}
		if other, ok := seen[m[1]]; ok {
			t.Errorf("docs/decisions/%s and %s share number %s", e.Name(), other, m[1])
		}
		seen[m[1]] = e.Name()
		if !strings.Contains(string(index), "("+e.Name()+")") {
			t.Errorf("docs/decisions/README.md does not link %s", e.Name())
		}
	}
}

// TestPerformanceSize: docs/performance.md stays a reference.
func TestPerformanceSize(t *testing.T) {
	fi, err := os.Stat(filepath.Join(root(t), "docs", "performance.md"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > maxPerformanceBytes {
		t.Errorf("docs/performance.md is %d bytes, over %d: keep today's figures there and move history to a decision record", fi.Size(), maxPerformanceBytes)
	}
}

// link matches a Markdown link or image target.
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestRelativeLinks: every relative link in a Markdown file points to a
// file that exists and, with a #fragment into a Markdown file, to one of
// its headings (GitHub's anchors).
func TestRelativeLinks(t *testing.T) {
	r := root(t)
	anchors := map[string][]string{}
	walk(t, r, func(path string) {
		rel, _ := filepath.Rel(r, path)
		for _, l := range markdownLines(t, path) {
			for _, m := range link.FindAllStringSubmatch(l.text, -1) {
				target := m[1]
				if strings.Contains(target, ":") && !strings.HasPrefix(target, "#") {
					continue // a URL
				}
				file, frag, _ := strings.Cut(target, "#")
				dest := path
				if file != "" {
					dest = filepath.Join(filepath.Dir(path), file)
				}
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s:%d links %s, which does not exist", rel, l.n, target)
					continue
				}
				if frag == "" || !strings.HasSuffix(dest, ".md") {
					continue
				}
				if _, ok := anchors[dest]; !ok {
					anchors[dest] = headingAnchors(t, dest)
				}
				if !slices.Contains(anchors[dest], frag) {
					t.Errorf("%s:%d links %s, but %s has no heading with that anchor", rel, l.n, target, file)
				}
			}
		}
	}, ".md")
}

type mdLine struct {
	n    int
	text string
}

// markdownLines returns the lines of a Markdown file outside fenced code.
func markdownLines(t *testing.T, path string) []mdLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []mdLine
	fenced := false
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out = append(out, mdLine{n, line})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// headingAnchors returns the anchors GitHub gives a Markdown file's
// headings: lower case, punctuation other than '-' and '_' dropped,
// spaces as '-', and "-1", "-2", … after repeats.
func headingAnchors(t *testing.T, path string) []string {
	var out []string
	count := map[string]int{}
	for _, l := range markdownLines(t, path) {
		h, ok := strings.CutPrefix(strings.TrimLeft(l.text, "#"), " ")
		if !ok || !strings.HasPrefix(l.text, "#") {
			continue
		}
		var b strings.Builder
		for _, c := range strings.ToLower(strings.TrimSpace(h)) {
			switch {
			case c == ' ':
				b.WriteByte('-')
			case c == '-' || c == '_' || unicode.IsLetter(c) || unicode.IsNumber(c) || unicode.IsMark(c):
				b.WriteRune(c)
			}
		}
		a := b.String()
		if n := count[a]; n > 0 {
			out = append(out, fmt.Sprintf("%s-%d", a, n))
		} else {
			out = append(out, a)
		}
		count[a]++
	}
	sort.Strings(out)
	return out
}
