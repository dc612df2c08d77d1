// Package cache owns tollfree's response cache: "a question asked twice
// should cost nothing the second time". A first answer is stored whole,
// keyed by a hash of the chain, the normalised messages, every parameter
// that changes the answer and an optional content version (seed 000: editing
// the site's content retires every cached answer at once; seed 002: evals
// re-run the same prompts and a re-run costs nothing).
//
// The package has three parts:
//
//   - KeyFor hashes a request into a Key. Whitespace runs in message text
//     fold to one space, so trivially different spellings of a question share
//     an answer; anything that can change the answer (temperature, the system
//     prompt, tools...) gives a different key.
//   - Entry is the stored answer, with a compact versioned binary encoding.
//   - Cache puts them together over a Backend. Its Do collapses identical
//     requests in flight into one upstream call, in which each waiter may
//     cancel on its own ctx without cancelling the others' shared call
//     (docs/STYLE.md: tailscale util/singleflight DoChanContext, not groupcache).
//
// Backends are Memory (an LRU bounded in bytes), Disk (one file per key) and
// Tiered (memory in front of disk or Redis). The Redis backend lives in
// cache/rediscache so that this package does not pull in the Redis client;
// cachetest holds the conformance suite every Backend passes.
package cache
