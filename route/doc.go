// Package route walks a chain for one request: it picks the routes that may
// be called (not resting, not paused, with budget left, large enough for the
// request), calls them one after another with each attempt's timeout clipped
// to what is left of the chain's deadline, races the next eligible route
// against a slow one (hedging), sorts every failure with the failure package,
// rests what the route or its provider caused, and hands back the first
// answer. It never retries a route while a caller waits: the chain is the
// retry (seed 003, rule 3).
//
// The decision table of DESIGN.md is applied in one place, Router.settle:
// a verdict's Scope says whether the failure stays with the request (a bad
// parameter, a refusal, a prompt too large for this route), rests the route,
// or rests the whole provider (a dead key: its other models share the
// account, so they are not tried now either).
//
// What the router remembers lives in a state.Store (rests and pauses) and a
// Budget (quota counts), so that a restart or another instance sees the same
// rests; per-route latency and failure streaks are kept in memory, since they
// only steer order and growth.
package route
