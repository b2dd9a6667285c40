package release

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/smoothanon/smoothanon/storage"
	"github.com/smoothanon/smoothanon/verify"
)

// StagedFeatureTable is where a directory release's job writes its feature
// table (Plan.FeatureTable), for Finish to publish.
func StagedFeatureTable(staging string) string { return storage.Join(staging, "features.csv") }

// checkFeatureTable refuses a feature table path that is an input file
// or that the input would read, and an existing file that is not a
// feature table, or is one without Overwrite.
func checkFeatureTable(ctx context.Context, p Plan) error {
	path := p.FeatureTable
	if path == "" {
		return nil
	}
	rp, err := resolve(path)
	if err != nil {
		return fmt.Errorf("--feature_report %s: %w", path, err)
	}
	for _, f := range p.InputFiles {
		if in, err := resolve(f); err == nil && in == rp {
			return fmt.Errorf("--feature_report %s is an input file", path)
		}
	}
	for _, part := range strings.Split(p.InputSpec, ",") {
		if part = strings.TrimSpace(part); part != "" && readsAs(part, rp) {
			return fmt.Errorf("--feature_report %s: the input %s would read it as input", path, part)
		}
	}
	head, err := readHead(ctx, path, len(verify.FeatureTableHeader+","+verify.SensitiveColumn)+1)
	if errors.Is(err, storage.ErrNotExist) {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("--feature_report %s: %w", path, pe.Err)
	}
	if err != nil {
		return fmt.Errorf("--feature_report %w", err)
	}
	switch {
	case !verify.IsFeatureTableHead(head):
		return fmt.Errorf("--feature_report %s exists and is not a feature table: only a feature table is ever replaced there", path)
	case p.Overwrite:
		return nil
	}
	return fmt.Errorf("--feature_report %s exists (pass --overwrite to replace it)", path)
}

// readHead reads the first n bytes of a file or object (fewer if it is
// shorter), without reading the rest.
func readHead(ctx context.Context, uri string, n int) ([]byte, error) {
	f, err := storage.Open(ctx, uri)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, min(int64(n), f.Size()))
	if _, err := f.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b, nil
}

// featureTable returns the feature table Finish publishes with the
// release: nil when none was asked for; an error when the work made none.
func (r *Run) featureTable(ctx context.Context, o Outcome) ([]byte, error) {
	if r.plan.FeatureTable == "" {
		return nil, nil
	}
	b := o.FeatureTable
	if r.plan.Dir {
		var err error
		if b, err = storage.ReadFile(ctx, StagedFeatureTable(r.staging)); err != nil {
			return nil, fmt.Errorf("the job staged no feature table: %w", err)
		}
	}
	if !verify.IsFeatureTableHead(b) {
		return nil, errors.New("the work made no feature table")
	}
	return b, nil
}
