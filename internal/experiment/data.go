package experiment

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/importer"
	"github.com/smoothanon/smoothanon/internal/datasets"
	"github.com/smoothanon/smoothanon/matrix"
)

// SBM is the name of the paper's generated data set ("stochastic"):
// gen.PaperSBM, drawn afresh with every seed.
const SBM = "sbm"

// Names lists the data sets in the order the programs report them.
var Names = []string{"adult", SBM, "dblp", "playstore"}

// Source finds and loads the data sets.
type Source struct {
	// Raw is the directory of the real data sets' files. Required.
	Raw string
}

// Missing returns the file a real data set needs when it is absent from
// Raw, "" when the set can be loaded (always for the SBM). An unknown name
// is an error.
func (s Source) Missing(name string) (string, error) {
	if name == SBM {
		return "", nil
	}
	set, err := datasets.Get(name)
	if err != nil {
		return "", err
	}
	p := filepath.Join(s.Raw, set.File)
	if _, err := os.Stat(p); err != nil {
		return p, nil
	}
	return "", nil
}

// Fixed reports whether the data set is the same for every seed (the real
// ones); the SBM is redrawn with each seed.
func Fixed(name string) bool { return name != SBM }

// Load returns the data set called name; seed only draws the SBM.
func (s Source) Load(name string, seed int64) (*matrix.Matrix, error) {
	if name == SBM {
		return gen.SBM(gen.PaperSBM(seed))
	}
	set, err := datasets.Get(name)
	if err != nil {
		return nil, err
	}
	m, _, err := importer.Import(set.Format, filepath.Join(s.Raw, set.File), set.Opts)
	if err != nil {
		return nil, fmt.Errorf("data set %s: %w", name, err)
	}
	return m, nil
}

// Density is |E| / (rows × distinct features), the paper's λ.
func Density(m *matrix.Matrix) float64 {
	return float64(m.NumEntries()) / (float64(m.NumRows()) * float64(len(m.Columns())))
}
