// Package pace spreads a chain's day-capped routes over their day (issue
// 31, docs/PACING.md), as ad servers pace a daily budget.
//
// A route whose cap is a day or longer (requests or tokens, of the route
// or its provider, reset at a set time) spent in the quiet morning in
// chain order is gone at the evening peak, while a route that renews by
// the minute sat idle all morning. The Pacer counts each chain's demand by
// hour (Arrived: in memory, written to the state.Store in batches, off the
// request path), and keeps, per chain, a forecast worked out on a
// goroutine every 15 seconds: the demand expected in each hour of the day
// (the mean of the past seven days that have it; a fresh install's is the
// day's rate so far), what each route has left (quota.Book.Left), and from
// them:
//
//   - whether the day caps bind (never before the chain counted ten
//     requests: a rate from two is noise): the demand expected before a day-capped
//     route's reset exceeds what it and the day-capped routes before it
//     have left. When none binds, nothing changes: the chain's order is
//     kept exactly;
//   - the renewable routes (no day cap, or one that does not bind) and
//     what they carry an hour under their minute and hour limits, a day
//     cap that does not bind no more than what it has left over the hours
//     to its reset;
//   - each binding route's pace line: its cap times the share of its
//     window's excess demand (beyond what the renewable routes carry)
//     that is already past. With no excess forecast the line stays at 0:
//     the cap answers what the renewable routes cannot, and what is left
//     of it goes in chain order once the demand left before its reset is
//     less than the caps left.
//
// A binding route past its line (with one request of slack) is held: Order
// puts it after the others, so that it answers only when no route within
// pace can. On a token cap a request counts as its tokens in average
// requests, and held routes are tried cheapest first (what the request
// costs each of what it has left), so long questions go to request caps
// and short ones to token caps. Pacing only moves a day-capped route's
// answers in time; two routes within pace keep their order. The line compares with the shared
// count (the Store's), so instances sharing a Redis pace together.
//
// Nothing here waits for the Store on a request's path: Arrived takes a
// lock and adds, Order and Picked read the latest forecast.
package pace
