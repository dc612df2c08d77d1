package llm

// The types below are what the gateway (the root package, tollfree) takes
// and gives back for one request, whoever asks: a Go program calling
// Gateway.Chat, or the HTTP API, which only decodes, calls the gateway and
// encodes (issue 11: one request path for the library and the server).
// They live here, in the leaf, so that the HTTP package can speak them
// without importing the root package that mounts it; the root re-exports
// them.

// Caller is who asks, as the gateway's caller limits see it (config
// callers:, gateway_keys; issue 12). The HTTP API works it out from each
// request as the operator configured it (package caller: the gateway key,
// a signed visitor id or the client's address, never a field the client
// writes freely); a Go program fills it in itself.
type Caller struct {
	// ID is what the caller's limits count: an opaque id (a visitor, a
	// session, a key's end user); it is hashed before it names a counter.
	// Empty, without a Key: the per-caller limits do not apply, the site's
	// daily cap still does. Empty, with a Key: the key's own count.
	ID string
	// Key names the gateway key (config gateway_keys name) whose chains and
	// limits apply; "" for a visitor, limited by callers:. A name that is
	// no key of the plan is an error.
	Key string
	// Owner skips the per-caller limits and may use the site's reserve
	// (seed 004: "the owner can always get through"). A key marked owner is
	// the owner whatever this says.
	Owner bool
	// Also, when set, is a second id whose counters the visitor's limits
	// spend too, the same limits as ID's: the address a visitor id issued
	// in the last day came from, so that an address minting new ids
	// cannot multiply its own limits (issue 32).
	Also string
}

// Call is one request handed to the gateway.
type Call struct {
	// Request is what to answer. The gateway does not modify it.
	Request *Request
	// Caller is who asks.
	Caller Caller
	// NoCache skips the chain's response cache for this request (the HTTP
	// API sets it for Cache-Control: no-cache or no-store).
	NoCache bool
	// ID is the request id written to the call log. Empty: the gateway
	// makes one.
	ID string
	// Language is the visitor's Accept-Language, for the resting sentence
	// of a search answer (a site assistant's, or a plain chain's search
	// fallback); "" guesses it from the question (issue 14).
	Language string
	// Ask, for a site assistant's chain, keeps the answer's sources apart
	// (Answer.Sources) instead of ending its text with them as Markdown
	// links: what POST /v1/ask wants.
	Ask bool
}

// Source is a section of a site assistant's content that an answer drew
// on: its title and link.
type Source struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

// ServedBy says which step of the gateway's flow answered a request.
type ServedBy uint8

// The steps that can answer. A request none of them answered gets an
// error instead.
const (
	// ServedByRoute: a route of the chain answered (walking the chain,
	// failing over, hedging).
	ServedByRoute ServedBy = iota + 1
	// ServedByCache: the chain's response cache held the answer; no call
	// was made and no quota spent.
	ServedByCache
	// ServedBySharedCall: an identical request was in flight; this one
	// shared its answer (one upstream call for both).
	ServedBySharedCall
	// ServedByFallbackMessage: no route could answer; the chain's fixed
	// fallback message did.
	ServedByFallbackMessage
	// ServedByFallbackSearch: no route could answer (or the site's daily
	// cap was reached); a keyword search over the chain's content did.
	ServedByFallbackSearch
	// ServedByRule: a site assistant's rule answered (config
	// AssistantRule): no call, no quota (issue 14, seed 003 rule 7).
	ServedByRule
)

var servedNames = [...]string{"", "route", "cache", "shared call", "fallback message", "fallback search", "rule"}

func (s ServedBy) String() string {
	if int(s) < len(servedNames) && s != 0 {
		return servedNames[s]
	}
	return "unknown"
}

// Fallback reports whether a chain's fallback answered, and which kind:
// "message" or "search" ("" otherwise).
func (s ServedBy) Fallback() string {
	switch s {
	case ServedByFallbackMessage:
		return "message"
	case ServedByFallbackSearch:
		return "search"
	}
	return ""
}

// Answer is the gateway's whole answer to a request, and what gave it.
type Answer struct {
	// Response is the answer. For a fallback it holds only the text and
	// the finish reason "stop"; from the cache, what was stored.
	Response
	// ServedBy says which step answered.
	ServedBy ServedBy
	// Route is the id of the route whose answer this is (for a cached
	// answer, the route that gave it first), "" for a fallback.
	Route string
	// RequestID is the request's id, as in the call log.
	RequestID string
	// CacheMiss reports that the chain caches answers and this request
	// looked for one in vain (whatever then answered it).
	CacheMiss bool
	// Sources are the sections a site assistant's answer drew on (issue
	// 14); nil on other chains.
	Sources []Source
}

// AnswerStream is the gateway's streamed answer to a request, and what
// gave it: a route's stream (continued on another route if it broke, see
// route.Router.Stream), a cached answer replayed, or a chain's fallback.
// Read it with Next until io.EOF; any other error means the answer broke
// off (the text so far is incomplete) or the caller went away. Close it
// when done, even after an error; Close is safe to call more than once.
type AnswerStream struct {
	ChunkStream
	// ServedBy says which step answered.
	ServedBy ServedBy
	// Route is the id of the route that sent the first token (for a cached
	// answer, the route that gave it first), "" for a fallback.
	Route string
	// RequestID is the request's id, as in the call log.
	RequestID string
	// CacheMiss reports that the chain caches answers and this request
	// looked for one in vain.
	CacheMiss bool
	// Sources, on a site assistant's chain, returns the sections the
	// answer drew on once Next has returned io.EOF; nil elsewhere.
	Sources func() []Source
	// WrittenBy, when set, returns the id of the route writing the answer
	// now: Route until a broken stream is continued, then the route that
	// continues it, and once Next returned io.EOF the route that finished
	// it (issue 33). Call it from the goroutine that calls Next.
	WrittenBy func() string
}

// ChunkStream is the body of an AnswerStream. Next is for one goroutine at a
// time; Close may be called from any.
type ChunkStream interface {
	// Next returns the next chunk, io.EOF at the clean end of the answer.
	Next() (Chunk, error)
	// Buffered reports how many chunks are at hand without waiting on the
	// network (0 when the next Next may wait): the HTTP API flushes when it
	// is 0.
	Buffered() int
	// Usage returns the answer's usage once Next returned io.EOF; exact is
	// false when some of it was estimated.
	Usage() (u Usage, exact bool)
	// Close releases the stream.
	Close() error
}
