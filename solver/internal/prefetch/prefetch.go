// Package prefetch asks the CPU to start loading memory that a loop will
// read a few iterations later. Loops whose iterations each read a few
// lines at random addresses in arrays far larger than the caches (the
// solver's restarts on a million rows) otherwise wait for each line in
// turn; a prefetch lets those loads overlap with the work in between.
// It is a hint: it never faults, and where no instruction is wired (see
// Available) it does nothing.
package prefetch
