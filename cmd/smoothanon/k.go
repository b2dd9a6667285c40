package main

// minK is the smallest k any command accepts: with k = 1 every user is a
// class of its own and a "release" is the input unchanged.
const minK = 2

// checkK refuses a --k below minK with one line naming the value (exit 2);
// k = 0 is a --k that was not given.
func checkK(k int) error {
	if k == 0 {
		return usageErr("missing --k: the smallest class size, at least %d", minK)
	}
	if k < minK {
		return usageErr("--k = %d, must be at least %d (k = 1 would release the input unchanged)", k, minK)
	}
	return nil
}
