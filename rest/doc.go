// Package rest owns the consequences of the decision table
// (docs/DECISIONS.md): what a
// failure holds back (a route, or every route of a provider, since they
// share the account), for how long, and what a route is doing as everyone
// reads it. Package failure says what happened (the class and scope of an
// attempt); rest says what follows from it. The router asks rest what to
// do with an attempt that did not answer; the status page, the metrics and
// the admin API read rests through it. Outside it, a rest's key and class
// are text only where they are written down: the state store, the call
// log, /status.json and the metrics' labels.
//
//   - Key names what a rest holds back: RouteKey(id) or ProviderKey(name).
//     Its text ("groq/llama-3.3-70b-versatile", "provider:groq") is made and
//     read only by String and ParseKey; the state store, the call log and
//     the metrics keep that text.
//   - Policy, compiled from config.RestTimes, is the table itself: a pure
//     function from a verdict, the time, the route's failures in a row and
//     its next daily reset to until when, and which Key.
//   - Keeper applies it as attempts end: it counts each route's failures in
//     a row (a rest may grow with them) and its silent hedge losses (two in
//     a row rest it as a timeout), and records the rests in the state store,
//     where every instance sharing it sees them. The counts are per
//     instance, in memory: they only steer growth and strikes.
//   - Pause and Resume are the operator's hands: a pause set by hand wins
//     over any automatic rest and only Resume lifts it; Keeper.Lift, after
//     a probe that answered, lifts automatic rests only (seed 004).
//   - Table is the rests in force as one request or one snapshot reads them
//     (Load); Table.Of gives a route's Standing: its State (ready, resting,
//     paused, exhausted, disabled), and the typed Rest behind it.
//   - Learn records a trait of a route (TraitKey, NoPrefix: it refused a
//     prefix continuation) in the same store, with a long expiry, so that
//     every instance and a restart know it; Table.Knows reads it. A trait
//     holds nothing back and is never shown as a rest: Of, Holding and
//     Ends read only the route's and its provider's keys.
//
// A rest holds no key, prompt or answer text: a Key, a class, times, and
// the redacted short reason of the failure (failure.Verdict.LogText).
package rest
