// Package quota owns the budgets: the requests and tokens a route, its
// provider and a caller may still spend. The router asks it before every
// attempt (Reserve), tells it what the attempt really used (Settle) and what
// the provider's rate-limit headers said (Observe); the server asks it
// whether a caller may ask at all (Enter, given back by Leave, or by
// Refund when the gateway could not take the request after all). It
// keeps no counts of its own: every
// count lives in a state.Store, so a restart or a second instance sees the
// same budgets, and every check-and-spend is one atomic Store.Spend (a
// window the Store just refused is refused again from memory, see Spent
// windows). The
// limits learned from headers are kept in the Store's notes too, written
// and read off the request path (learned.go).
//
// # Windows
//
// A per-minute budget is a sliding minute: 241 quarter-second slots summed,
// the current one only begun, so that it covers 60 to 60.25 seconds and never
// less than a provider's true minute. A per-day budget follows the provider's own
// clock (config.Reset): either a midnight in a time zone, where the day's one
// slot is named by the local calendar date (so a 23-hour or 25-hour day
// across a daylight-saving change is still exactly one day), or a rolling 24
// hours summed over 25 one-hour slots for the same reason. A per-hour budget
// (rph, tph: Cerebras publishes them) is seven 10-minute slots summed like
// the minute; a per-month budget (tpmo: Mistral's tokens per month; rpmo:
// Cohere's trial calls per month) is one
// slot named for the calendar month in the reset's zone (UTC for a rolling
// day), turning on the 1st at midnight. The hour and the month are counted
// only where a limit is configured: no header teaches them, and a route
// without them costs nothing more. Caller
// limits use a sliding hour (six 10-minute slots) and a rolling day. Every
// slot boundary and reset falls on a whole second, so a route's spends
// (windows, limits, counter names and their hashes) are worked out once a
// second and shared by that second's reservations (template.go).
//
// # Caller limits
//
// Enter checks one request against every limit of its Ask in one
// Store.Spend (issue 12): the caller's own limits, its limits in the chain
// asked for, the limits of all the users of its key together, and the
// site's day less the owner's reserve. Each limit is a window like a
// route's, so every instance sharing a Store agrees, and counts expire
// with their windows:
//
//   - requests per hour and per day: the sliding hour and the rolling day;
//   - tokens per day: the rolling day, spent on the estimate and settled by
//     Leave with what the answer used;
//   - concurrent requests: a count in a window of two slots of a lease
//     (Ask.Lease, ten minutes by default), given back by Leave; a count
//     left by an instance that died before Leave drops out with its slot;
//   - a burst: requests in a sliding window at least Within long (slots of
//     a tenth of it). The request past Count is refused and, with a Mute,
//     adds a weight of 2^40 to a mute counter whose limit is that weight:
//     every request until the weight's slot drops out (Mute to Mute plus a
//     tenth) is refused, on every instance. A refused request counts
//     nowhere, so asking while muted does not lengthen the mute.
//
// On a Store that checks two groups of spends in one call (both stores do:
// state.SplitSpender), the gateway asks with Admit instead: it counts
// nothing, and the first Reserve made under WithPass makes the caller's
// spends together with the route's, in one call (one round trip to Redis,
// one hold of memstore's lock), the caller's first and all or nothing
// (admit.go). Commit makes them when no Reserve did.
//
// A refusal is a *LimitError naming the scope and kind of limit, its value
// and when the caller may ask again, never a Store error: when the Store
// fails, Enter lets the request through with a Pass that gives nothing
// back.
//
// Every attempt counts, failed and cancelled ones too: providers count them
// (docs/DECISIONS.md, "Failed calls count against a provider's quota"), so a
// reservation is never refunded, only corrected by the reported usage.
//
// # Account-wide limits
//
// A provider's Limits are shared by all its routes (OpenRouter's 20 RPM and
// 50 RPD over every :free model). Reserve spends on the route's windows and
// on its provider's windows in one Store.Spend, so either both take the
// request or neither does.
//
// # Margin
//
// A chain's margin keeps a route from running into its provider's limit: a
// spend passes a window of limit L only while the window stays within
// ceil(L*(1-margin)). Rounding up means the margin holds back only whole
// requests it fully covers: at the default 0.05 a 14,400 RPD route stops at
// 13,680, a 20 RPD route at 19, and every limit under 20 (a 1 RPM, 8 RPD
// model) keeps its full count, since holding back one of 8 would cost an
// eighth of the budget to guard against a twentieth. The result is never
// below 1, whatever the margin.
//
// # Header corrections
//
// Observe brings a count in line with a provider's rate-limit headers, but
// a provider computes them before it has seen the calls reserved meanwhile.
// So the provider's count plus this Book's reservations still in flight is
// the target; a count is raised to it, and lowered only by taking back
// raises Observe made itself, never below what was reserved (issue 10: an
// rpd-10 route with Groq's headers took 11 calls when a header erased the
// reservations in flight). See Observe for the rule and its bounds.
//
// # Spent windows
//
// A window the Store refused is remembered by the Book until it may have
// room again (the slot whose expiry makes room, the day's or month's
// reset), a second at most: until then Reserve refuses the same route a
// spend as large without asking the Store, and Book.Spent tells a router
// so without a Reserve (issue 18: a long chain's spent routes cost a
// Redis round trip each, on every request). A Settle or Observe of this
// Book that lowers a count forgets what it knew of that count; the second
// bounds what another instance's lowering can be missed. See spent.go.
//
// # After the answer
//
// Settle, Leave, Refund and Observe's corrections change counts nobody
// waits for. On a Store that queues adds (state.Deferrer, the Redis
// store) they are queued and applied in batches off the caller's path,
// and Observe reads and corrects on its own goroutine (Close waits for
// it); on any other Store they are applied at once. Flush waits for what
// was queued.
//
// # Store failures
//
// A budget is a courtesy to the provider, not a safety property: when the
// Store cannot be reached, Reserve and Enter return an error wrapping the
// Store's (errors.Is(err, state.ErrUnavailable)) and the router treats the
// route as allowed, the gateway the caller, so Redis going away never
// stops an answer. A refused budget is always a *SpentError, a refused
// caller a *LimitError, never a Store error.
//
// # Token estimate
//
// Estimate is a calibrated count, not a tokenizer: it counts ASCII words,
// digits, punctuation and non-ASCII runes in one pass without allocating.
// Its weights were fitted to cl100k_base counts of 11 samples in
// testdata/estimate (English prose, Go, Python, JSON, mixed markdown,
// Chinese, Japanese, Korean, Russian): mean error 2.8%, worst 5.9%. On 4
// held-out samples the mean error is 6.4%; the worst, −20%, is a dense table
// of model ids and numbers ("llama-3.1-8b-instant 30 / 14.4K"), which cl100k
// cuts finer than prose. Tokenizers of the free models (Llama 3, Qwen,
// Gemma, gpt-oss's o200k) count English within a few percent of cl100k and
// CJK or Cyrillic text up to 45% lower (o200k counts in counts.json), so the
// estimate errs high there, the safe side for a budget. It only has to keep a
// route from a 413 or a TPM 429; Settle replaces it with the provider's own
// count as soon as one is reported, and each route learns how its provider
// counts prompts against it, and how long its answers are, for the
// reservations that follow (answers.go). The count of a text of 256 bytes or
// more is remembered by a seeded hash of it (textcache.go, 32 KB, no text
// kept): the system prompt, tools and history a request resends are not
// counted again, a tenth of the cost in BenchmarkEstimate.
package quota
