// Package route walks a chain for one request: it picks the routes that may
// be called (not resting, not paused, with budget left, large enough for the
// request), calls them one after another with each attempt's timeout clipped
// to what is left of the chain's deadline, races the next eligible route
// against a slow one (hedging), sorts every failure with the failure package,
// rests what the route or its provider caused, and hands back the first
// answer. The chain is the retry (seed 003, rule 3): a failed attempt
// moves the request to the next route, with one exception, a blip (a bare
// 500 or 502, or a short per-minute 429 that fits the deadline), which is
// retried once on the same route after the wait it asked for (blip.go,
// issue 13).
// A repair is no retry either: a route whose answer broke its request's
// schema is asked a new question, its answer and what was wrong with it
// (seed 002; typed.go).
//
// The decision table of docs/DECISIONS.md is applied in one place: walk.settle
// hands every attempt that did not answer to package rest (rest.Keeper),
// which owns its consequences. A verdict's Scope says whether the failure
// stays with the request (a bad parameter, a refusal, a prompt too large
// for this route), rests the route, or rests the whole provider (a dead
// key: its other models share the account, so they are not tried now
// either, for this request).
//
// Hedging starts the next route with plenty of quota, looking past scarce
// ones (they keep their place for ordinary failover). A race's loser that
// had sent nothing for at least the hedge delay is a silent loser: two in a
// row rest it as a timeout, since a route that hangs on every call but
// always loses would otherwise never rest, and every request would wait
// for it. An answer, even empty, is judged on what it holds: a stream that
// ends with no content and no tool call is empty, however it ended.
//
// A stream that breaks after its first token cannot be taken back (issue
// 13): by default the next eligible route continues it, by a prefix
// continuation where its provider honours one, else by instruct (the
// answer handed back with a request to continue it); a route that refuses
// a prefix is learned as such (rest.NoPrefix) and asked by instruct; what
// the continuation sends is joined to what was sent only where the join is
// proven byte for byte (join.go: the route writes the last word again, and
// a repeat or restart is trimmed only when it reads one way), or it is
// abandoned for the next method or route.
// Only when no route can continue does the stream end with an error.
//
// The code follows one request's way: pick.go decides whether a route may
// take the request now (rests, a disabled route or failed provider, its
// context, its budget, hedge eligibility), the one pick the walk, a
// stream's continuation and a probe share; fit.go cuts the request to a
// route's context; attempt.go launches attempts and races hedges; blip.go
// retries a blip once on the same route; settle.go judges an attempt that
// did not answer and settles it; typed.go checks a typed answer (a JSON
// response_format, tools' parameters) before it wins, repairs an invalid
// one on the same route, and asks each route what it can enforce (issue
// 15); walk.go holds a walk's state and its errors; stream.go streams an
// answer and ends its parts, continue.go has a broken one continued, by
// which method, and join.go judges a continuation against the text already
// sent; probe.go calls one route by hand.
//
// What the router remembers lives in a state.Store (rests and pauses, read
// and written through package rest) and a Budget (quota counts), so that a
// restart or another instance sees the same rests. Per-route latency is
// kept here and, off the request path, in the Store's notes
// (latencynote.go), so a latency-aware order survives a restart and is
// shared; failure streaks and silent losses are kept in the rest.Keeper, in
// memory, per instance, since they only steer growth and strikes.
package route
