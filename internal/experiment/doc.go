// Package experiment holds what the measurement programs (cmd/quality and
// cmd/figures) share: the data sets by name (the real ones of
// internal/datasets and the paper's generated SBM), the paper's published
// results, and releases of every method that are verified before their
// utility is used — a k-anonymous release that fails verify.Check is an
// error, never a data point.
package experiment
