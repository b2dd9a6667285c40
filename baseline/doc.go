// Package baseline implements the paper's baselines, against which the
// solver's releases are compared: Mondrian k-anonymity and randomized
// response under ε-edge or ε-node differential privacy. Like the solver it
// is a plain Go library (no Beam), and every function returns a release with
// the same users, in the same row order, as its input.
//
// # Guarantees and threat model
//
// Mondrian releases are k-anonymous by suppression: the users are cut into
// partitions of at least k, and each user's row is replaced by the features
// every user of its partition holds, so every set of identical output rows
// holds at least k users and no entry is created. As for the solver, the
// adversary knows any part of a user's original row and the algorithm; k
// bounds the chance of telling that user apart within its class. Mondrian
// claims nothing when the adversary also knows other users' rows.
//
// Randomized response releases are ε-differentially private at the level of
// one edge (a user, feature cell) or of one node (a user's whole row): every
// cell of the users × features table is, with probability p, replaced by a
// fair coin and otherwise kept, with p = 2/(1+e^ε) for edges and
// p = 2/(1+e^(ε/|F|)) for nodes, |F| being the input's distinct features.
// The guarantee holds against any adversary, but on sparse data it costs
// most of the utility unless ε is large (the paper's section on differential
// privacy); the run report says what it costs. The table's columns are the
// distinct features of the input, so which features exist is released as
// it is: the guarantee assumes the feature domain is public.
package baseline
