// Package sim owns the day simulator behind `tollfree sim`: a trace of
// questions (a shape of traffic generated from a seed, MakeShape, or read
// from a CSV file) played on a virtual clock against the emulated free
// tiers, twice through tollfree's real router, budgets and state (its
// limits configured, and learned), once through a naive ordered chain
// (seed 001's loop), and once as a greedy capacity oracle, with what each
// answered, its share of the optimum, the 429s it caused, the calls it
// wasted on them, on failures and on hedge losers, and its answer times.
//
// The optimum is not played but computed with hindsight (Optimum): a
// maximum flow over one-minute slots from the questions to the routes'
// minute and day limits. It is an upper bound, not always reached: any
// schedule the emulator accepts is a flow of that network (each limit of
// the network is one the emulator checks, or a looser one), so none
// answers more; it relaxes sliding windows to whole minutes and days and
// token limits to counts of the cheapest questions that fit, and is exact
// where those relaxations do not bite (TestOptimumExact).
//
// The default day binds: seed 000's 3,000 questions over the routes of its
// chain that have a daily cap (CappedChain), more than those routes carry,
// with every failed call, 429s included, counted against the day as seed
// 000 saw the providers count it. docs/SIM.md describes the definitions,
// the shapes and the results.
//
// No request waits on real time: a driver moves a fake clock to the next
// timer or arrival as soon as every goroutine it drives is waiting on it.
package sim
