// Package secret owns the configured secrets (provider keys, the admin
// token, gateway keys, passwords in the Redis address and in base URLs,
// credential headers) as a Set, and scrubs them by value, whatever their
// shape, from text that leaves the process or reaches disk (issue 10, item
// 2). Shape rules (gsk_, AIza, sk-...) in failure.Redact catch keys tollfree
// was never given; a Set catches the ones it was given, also when a provider
// quotes one back in an error ("Incorrect API key provided: ...").
//
// # Where it runs
//
// Text enters from outside in provider error bodies: the adapters scrub an
// UpstreamError's body and transport error before anything classifies,
// stores or logs it. The sinks scrub again as a last line of defence: a
// slog.Handler (NewHandler), an io.Writer (NewWriter, for the command
// line), and in the root package the call log's and status's recorder, the
// state store's rests and the HTTP responses other than answers. A
// successful answer is never scanned: only error text and operator pages
// pay for it.
//
// # What is covered
//
// For a value of at least 8 bytes, each of these is replaced by "[secret]":
//
//   - the value itself, anywhere, also glued to other text;
//   - the value as JSON (with and without HTML escaping, "/" as "\/"), Go
//     quoting, URL query and path escaping, and HTML escaping (html and
//     html/template's, which writes '+' as "&#43;"), so that a status page,
//     a JSON document or a URL cannot carry it encoded;
//   - a fragment: any run of 8 bytes or more that is a prefix or a suffix
//     of the value (or of an encoded form), so that an echo cut short by a
//     provider or by tollfree's own clipping ("tfk.Zq9-weird+KE…") is
//     scrubbed as far as it reaches;
//   - a masked echo: a mask ("**", "...", "…") with a prefix of the value
//     before it and a suffix after it ("sk-WRQsP****xQBt", "na***ys",
//     "sk-...m31Q", as OpenAI, xAI and LiteLLM write rejected keys), when
//     the two visible ends together show at least 4 bytes of one value, or
//     2 on each side.
//
// A value of 4 to 7 bytes is replaced only where it stands as a whole word
// (not next to a letter or digit), in any of its encodings, and in masked
// echoes: scrubbing it inside words would rewrite ordinary text. A value
// under 4 bytes is not scrubbed at all (Set.Skipped counts them, and the
// gateway warns at start): no real credential is that short, and scrubbing
// "42" would corrupt every log line.
//
// Not covered: a middle part of a value that is neither a prefix nor a
// suffix, encodings other than those above (base64 of a Basic credential,
// lower-case percent escapes), and a value split across two writes of a
// Writer (every writer here writes whole lines). Matching is byte-exact and
// case-sensitive, as keys are.
//
// A Set never logs or returns a value it holds; its String method does not
// print them. A nil *Set is an empty set: every method is safe on it.
package secret
