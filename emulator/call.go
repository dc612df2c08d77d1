package emulator

import (
	"context"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tollfree/tollfree/internal/clock"
)

// hangDefault is how long Hang and StreamStall last when the client stays.
const hangDefault = 10 * time.Minute

// call is one chat call being served, in either dialect.
type call struct {
	prov    Provider
	modelID string
	stream  bool
	// includeUsage is stream_options.include_usage.
	includeUsage bool
	// prompt is the estimated prompt tokens: ceil(bytes of text / 4).
	prompt int
	// prefix is the assistant text to continue, when hasPrefix: the last
	// message is the assistant's (a prefill); prefixFlag says it carried
	// Mistral's "prefix": true.
	prefix     string
	hasPrefix  bool
	prefixFlag bool
	// partial is the assistant text before a last user message, when
	// hasPartial: the shape of an instruct continuation (continue.go).
	partial    string
	hasPartial bool
	// fieldAt is the first message that carries a "prefix" field, -1 for
	// none; fieldRole is its role.
	fieldAt   int
	fieldRole string
	maxTokens int
	// compat marks a call to Gemini's OpenAI-compatible endpoint: Google's
	// errors wrapped in a JSON array, usage on every chunk.
	compat bool
	// gotKey is the key the call carried (Authorization: Bearer, or
	// Gemini's x-goog-api-key / ?key=), for EchoKey.
	gotKey string
	// format is the response format asked (Record.Format).
	format string
	// turns are the messages, for Model.Reply.
	turns []Turn
	// ask is what the call asks beyond text: tools, a schema, media
	// (follow.go); calls the function calls a following model answers.
	ask   asked
	calls []emuCall
	// embed marks an embeddings call (embed.go): inputs to turn into
	// vectors of dims dimensions (0: the model's).
	embed  bool
	inputs []string
	dims   int

	// Set by admit.
	seq        int
	rec        int
	start      time.Time
	model      Model
	step       Step
	kind       Kind
	limited    bool     // answered by the emulator's own limits
	rate       rateInfo // the limit hit, when limited
	answer     string
	finish     string // "stop" or "length"
	completion int
	budget     budget // the model's windows after this call
	acct       budget // the account's windows after this call
}

// tokensOf is the emulator's deterministic token estimate.
func tokensOf(n int) int { return (n + 3) / 4 }

func defaultAnswer(providerName, modelID string) string {
	return "Hello from the tollfree emulator: this answer comes from " + providerName + "/" + modelID + "."
}

// admit counts the call, picks its behaviour (limits first, then the
// script, then the default) and records it. It holds the lock only for
// bookkeeping.
func (e *Emulator) admit(c *call) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seq++
	c.seq = e.seq
	now := e.clock.Now()
	c.start = now
	c.rec = len(e.records)
	rec := Record{Time: now, Provider: c.prov.Name, Model: c.modelID, Stream: c.stream, PromptTokens: c.prompt, Format: c.format}
	defer func() { e.records = append(e.records, rec) }()

	p := e.providers[c.prov.Name]
	m := p.models[c.modelID]
	if m == nil {
		c.kind = NotFound
		rec.Behaviour = "unknown_model"
		return
	}
	m.calls++
	c.model = m.cfg
	if m.cfg.Gone {
		c.kind = NotFound
		if c.prov.Flavor == FlavorGroq || c.prov.Flavor == FlavorNVIDIA {
			c.kind = Decommissioned
		}
		rec.Behaviour = string(c.kind)
		return
	}
	step := m.def
	switch {
	case len(m.script) > 0:
		step = m.script[0]
	case m.mix != nil:
		step = m.mix.draw()
	}
	if !c.embed {
		c.setAnswer(step)
	}
	tokens := c.prompt + c.completion
	switch {
	case c.countsInputOnly():
		tokens = c.prompt
	case c.checksMaxTokens():
		tokens = c.prompt + c.maxTokens
	}

	m.win.prune(now, m.reset)
	p.win.prune(now, p.reset)
	ri, hit := m.win.check(m.cfg.Limits, m.reset, now, tokens)
	if !hit {
		ri, hit = p.win.check(p.cfg.Limits, p.reset, now, tokens)
		ri.Account = hit
	}
	if hit {
		c.limited, c.rate, c.completion, c.answer = true, ri, 0, ""
		c.kind = RateMinute
		switch {
		case ri.Day:
			c.kind = RateDay
		case ri.Tokens && tokens > ri.Limit:
			c.kind = TooLarge
		}
		if p.cfg.CountRefusals {
			m.win.refuse(now)
			p.win.refuse(now)
		}
		c.budget = m.win.budget(m.cfg.Limits, m.reset, now)
		c.acct = p.win.budget(p.cfg.Limits, p.reset, now)
		rec.Behaviour = "limit_" + string(c.kind)
		return
	}
	if len(m.script) > 0 {
		m.script = m.script[1:]
	}
	c.step, c.kind = step, step.Kind
	if c.kind == "" {
		c.kind = Answer
	}
	if c.embed {
		c.completion = 0
	}
	charged := 0
	if c.kind.answers() {
		charged = c.prompt + c.completion
		switch {
		case c.countsInputOnly():
			charged = c.prompt
		case c.chargesUpFront():
			charged = c.prompt + c.maxTokens
		}
	} else {
		c.completion = 0
	}
	m.win.add(now, charged)
	p.win.add(now, charged)
	c.budget = m.win.budget(m.cfg.Limits, m.reset, now)
	c.acct = p.win.budget(p.cfg.Limits, p.reset, now)
	rec.Behaviour = string(c.kind)
	rec.CompletionTokens = c.completion
}

// setAnswer works out the text the step would answer: the step's or the
// model's, as a continuation when the call is one (continued), cut at max
// tokens.
func (c *call) setAnswer(s Step) {
	c.finish = "stop"
	text := s.Text
	if text == "" || s.Kind == BadRequest {
		text = c.model.Answer
		if text == "" && c.model.Reply != nil {
			text = c.model.Reply(c.turns)
		}
	}
	if s.Text == "" && s.ToolCalls == "" && c.model.Follows && s.Kind != BadRequest && c.follow() {
		text = c.answer
	} else if text == "" && s.ToolCalls == "" {
		text = defaultAnswer(c.prov.Name, c.modelID)
	}
	text = c.continued(text)
	switch s.Kind {
	case Empty:
		text = ""
	case StreamLongLine:
		// One chunk over 64 KiB: the answer repeated past it.
		n := 64<<10/(len(text)+1) + 1
		text = strings.TrimSuffix(strings.Repeat(text+" ", n), " ")
	}
	if c.maxTokens > 0 && tokensOf(len(text)) > c.maxTokens {
		cut := c.maxTokens * 4
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
		c.finish = "length"
	}
	c.answer = text
	calls := len(s.ToolCalls)
	for _, tc := range c.calls {
		calls += len(tc.name) + len(tc.args)
	}
	c.completion = tokensOf(len(text) + calls)
	if (s.ToolCalls != "" || len(c.calls) > 0) && c.finish == "stop" {
		c.finish = "tool_calls"
	}
}

// finishRecord sets the status of the call's record.
func (e *Emulator) finishRecord(c *call, status int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if c.rec < len(e.records) {
		e.records[c.rec].Status = status
	}
}

// record adds the record of a call stopped before admission (a bad key, a
// body that does not parse or validate). It counts in Calls, but not against
// any limit.
func (e *Emulator) record(c *call, behaviour string, status int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p := e.providers[c.prov.Name]; p != nil {
		if m := p.models[c.modelID]; m != nil {
			m.calls++
		}
	}
	e.records = append(e.records, Record{Time: e.clock.Now(), Provider: c.prov.Name, Model: c.modelID,
		Status: status, Behaviour: behaviour, Stream: c.stream, PromptTokens: c.prompt, Format: c.format})
}

// latency waits before the answer: the step's Delay, else the model's
// Latency. It returns false when the client went away.
func (e *Emulator) latency(ctx context.Context, c *call) bool {
	if c.limited {
		return ctx.Err() == nil
	}
	d := c.model.Latency
	if c.step.Delay > 0 && c.kind != Hang && c.kind != StreamStall {
		d = c.step.Delay
	}
	return clock.Sleep(ctx, e.clock, d) == nil
}

// hang waits until the client leaves or the step's delay passes; then it
// drops the connection.
func (e *Emulator) hang(ctx context.Context, c *call) {
	d := c.step.Delay
	if d <= 0 {
		d = hangDefault
	}
	if clock.Sleep(ctx, e.clock, d) == nil {
		panic(http.ErrAbortHandler)
	}
}

// chunks splits an answer into the pieces streamed: one word with its
// following space each, so any number of leading chunks is a prefix of the
// answer.
func chunks(text string) []string {
	var out []string
	for text != "" {
		i := strings.IndexByte(text, ' ')
		if i < 0 {
			out = append(out, text)
			break
		}
		out = append(out, text[:i+1])
		text = text[i+1:]
	}
	return out
}

// untilMinute is how long until the next whole minute on the clock.
func untilMinute(now time.Time) time.Duration {
	d := now.Truncate(time.Minute).Add(time.Minute).Sub(now)
	return d
}

// scriptedRate makes up the limit a scripted RateMinute or RateDay names:
// the model's limit, else the account's, else the flavor's usual one.
func (e *Emulator) scriptedRate(c *call, now time.Time) rateInfo {
	ri := rateInfo{Day: c.kind == RateDay, Requested: 1}
	l, a := c.model.Limits, c.prov.Limits
	first := func(v ...int) int {
		for _, x := range v {
			if x > 0 {
				return x
			}
		}
		return 0
	}
	reset := c.model.Reset.resolve(c.prov.Flavor, e.la)
	if ri.Day {
		ri.Limit = first(l.RPD, a.RPD, flavorRPD(c.prov.Flavor))
		if reset.Rolling {
			ri.Wait = 24 * time.Hour / time.Duration(ri.Limit)
		} else {
			ri.Wait = reset.nextMidnight(now).Sub(now)
		}
	} else {
		ri.Limit = first(l.RPM, a.RPM, 30)
		ri.Wait = untilMinute(now)
		if c.prov.Flavor == FlavorGroq {
			ri.Wait = 2 * time.Second
		}
	}
	if l.RPD == 0 && l.RPM == 0 && (a.RPD > 0 || a.RPM > 0) {
		ri.Account = true
	}
	if c.step.RetryAfter > 0 {
		ri.Wait = c.step.RetryAfter
	}
	ri.Used = ri.Limit
	ri.ResetAt = now.Add(ri.Wait)
	if ri.Day && !reset.Rolling {
		ri.ResetAt = reset.nextMidnight(now)
	}
	return ri
}

func flavorRPD(flavor string) int {
	switch flavor {
	case FlavorOpenRouter, FlavorGitHub:
		return 50
	case FlavorGemini:
		return 20
	case FlavorCerebras:
		return 14400
	}
	return 1000
}

// chargesUpFront reports whether the call is counted against its token
// limits as its prompt and max_tokens, as Cerebras counts a request when
// it arrives ("we estimate the total tokens the request will consume by
// ... adding either the max_completion_tokens parameter or an analyzed
// estimate for an upper bound of the output tokens",
// https://inference-docs.cerebras.ai/support/rate-limits; "estimates quota
// based on max_completion_tokens upfront, not actual usage",
// https://github.com/Cerebras/vscode-cerebras-chat/releases/tag/v0.1.18):
// checked and charged so, whatever the answer costs. Without max_tokens
// the provider's "analyzed estimate" is unknown, and the emulator charges
// the answer.
func (c *call) chargesUpFront() bool {
	return c.prov.Flavor == FlavorCerebras && c.maxTokens > 0
}

// countsInputOnly reports whether the call's token limits count its
// prompt alone: Gemini's free tier limits input tokens a minute (its 429
// names the quota metric generate_content_free_tier_input_token_count, and
// the free tier's published limits are RPM, RPD and input TPM,
// docs/PROVIDERS.md, "Gemini"); an answer's tokens count in no window.
func (c *call) countsInputOnly() bool {
	return c.prov.Flavor == FlavorGemini
}

// checksMaxTokens reports whether the call is admitted by its prompt and
// max_tokens against the token limits: on Cerebras, which also charges so
// (chargesUpFront), and on Groq, which reserves a request's prompt and
// max_tokens when it arrives and then counts what the answer cost ("the
// reservation is set by prompt + max_tokens against an 8000 TPM rolling
// window": a max_tokens of 8,192 was refused as "Request too large ...
// Limit 8000" whatever the prompt,
// https://github.com/maplibre/maplibre-agent-skills/pull/63; its 429s name
// a count used above the limit, "Limit 5000, Used 5747",
// https://github.com/crewAIInc/crewAI/issues/494, which only a charge
// after admission gives). No server can check a call by the answer it has
// not written yet. Without max_tokens the provider's own estimate is
// unknown, and the emulator checks the answer.
func (c *call) checksMaxTokens() bool {
	return c.chargesUpFront() || (c.prov.Flavor == FlavorGroq && c.maxTokens > 0)
}
