// Package linkage measures what an attacker learns by linking several
// releases of the same population.
//
// In one release a user hides in its class: the users whose released
// feature set is identical to its own. With several releases that keep the
// user ids, an attacker who can find a user's class in each release (by
// what it knows of the user's features) intersects them: the user's linked
// anonymity set is the users who share its class in every release that
// contains it. Users Measures those sets; below k the releases together
// are no longer k-anonymous for that user.
//
// When the releases' ids do not join (pseudonyms under different keys),
// users cannot be followed from release to release, and Classes measures
// what can still be linked: classes of one release whose released feature
// set reappears in the next, and how their sizes changed. Releases that
// record one pseudonym key fingerprint were made under one key: their ids
// join whatever their overlap, and Report.CheckKeys lists such pairs.
//
// The package has no Beam in it; it works on released matrices in memory.
package linkage
