// Package sim owns the day simulator behind `tollfree sim`: a trace of
// questions (generated like seed 000's site traffic, or read from a CSV
// file) played on a virtual clock against the emulated free tiers, once
// through tollfree's real router, budgets and state, once through a naive
// ordered chain (seed 001's loop), and once as a capacity oracle, with
// what each answered, the 429s it caused, the quota it spent on failures
// and hedge losers, and its answer times. docs/SIM.md describes the
// definitions and the results.
//
// No request waits on real time: a driver moves a fake clock to the next
// timer or arrival as soon as every goroutine it drives is waiting on it.
package sim
