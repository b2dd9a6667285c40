package experiment

// PaperK8 is one data set's mean Jaccard at k = 8 in the paper ("Smooth
// anonymity for sparse graphs", /work/shared/paper): the table labelled
// tab:results-k8 for adult and playstore, its extended version in the
// appendix (tab:results-k8-extended) for stochastic (our SBM) and dblp.
// HasMondrian is false where the paper did not run Mondrian.
type PaperK8 struct {
	Smooth, NonSmooth, Mondrian float64
	HasMondrian                 bool
	// Table names the paper's table the figures come from.
	Table string
}

// Paper lists the paper's k = 8 results by data set name.
var Paper = map[string]PaperK8{
	"adult":     {Smooth: 0.850, NonSmooth: 0.648, Mondrian: 0.599, HasMondrian: true, Table: "tab:results-k8"},
	"playstore": {Smooth: 0.661, NonSmooth: 0.392, Mondrian: 0.512, HasMondrian: true, Table: "tab:results-k8"},
	SBM:         {Smooth: 0.681, NonSmooth: 0.164, Mondrian: 0.022, HasMondrian: true, Table: "tab:results-k8-extended"},
	"dblp":      {Smooth: 0.074, NonSmooth: 0.043, Table: "tab:results-k8-extended"},
}
