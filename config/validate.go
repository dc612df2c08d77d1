package config

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"
)

// provState is a provider resolved against its preset during validation.
type provState struct {
	name    string
	cfg     *ProviderConfig
	preset  *Preset
	dialect Dialect
	baseURL string
	// missing are unset variables the preset's base URL needs
	// (CLOUDFLARE_ACCOUNT_ID).
	missing []string
	reset   Reset
}

// validate is stage three: report every problem, never panic.
func (l *loader) validate() {
	f := &l.f
	if _, port, err := net.SplitHostPort(f.Listen); err != nil || port == "" {
		l.probs.addf("listen", "%s is not host:port (write, say, 127.0.0.1:8080 or :8080)", l.dec.quote("listen", f.Listen))
	}
	if f.Redis != "" && !hasAnyPrefix(f.Redis, "redis://", "rediss://", "unix://") {
		l.probs.addf("redis", "want a redis://, rediss:// or unix:// address")
	}
	l.validateCallers()
	l.validateStatus()
	if f.Server.MaxBody <= 0 {
		l.probs.addf("server.max_body", "must be more than 0")
	}
	l.validateServerLimits()
	l.validateMedia()
	if f.Rest.MinuteMax < f.Rest.MinuteMin {
		l.probs.addf("rest.minute_max", "%s is less than minute_min %s", f.Rest.MinuteMax, f.Rest.MinuteMin)
	}
	if g := *f.Rest.Growth; !(g >= 1 && g <= 100) {
		l.probs.addf("rest.growth", "must be between 1 (no growth) and 100")
	}
	for _, name := range l.provOrder {
		l.validateProvider(name)
	}
	for _, name := range l.chainOrder {
		l.validateChain(name)
	}
}

// The values of status.
const (
	StatusPublic  = "public"
	StatusPrivate = "private"
)

// validateStatus checks status, and that a private status can be read by
// someone.
func (l *loader) validateStatus() {
	f := &l.f
	switch f.Status {
	case "", StatusPublic:
	case StatusPrivate:
		if l.callers.adminToken == "" && len(l.callers.keys) == 0 {
			l.probs.addf("status", "private needs a token to read it: set gateway_keys or admin_token (or write public)")
		}
	default:
		l.probs.addf("status", "%s is not public or private", l.dec.quote("status", f.Status))
	}
}

// envSafe reports err at path, or only that the value is wrong when it came
// from the environment: err quotes the value, which may be a secret.
func (l *loader) envSafe(path string, err error) {
	if v, ok := l.dec.envVar[path]; ok {
		l.probs.addf(path, "the value of ${%s} is not valid here", v)
		return
	}
	l.probs.addf(path, "%s", err.Error())
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func (l *loader) validateProvider(name string) {
	pc := l.f.Providers[name]
	path := joinPath("providers", name)
	st := &provState{name: name, cfg: pc, dialect: Dialect(pc.Dialect)}
	l.provs[name] = st
	if name == "" || strings.ContainsAny(name, "/ \t") {
		l.probs.addf(path, "a provider's name cannot be empty or hold / or spaces (it starts every route's id)")
	}
	if pc.Preset != "" {
		if p, ok := l.cat[pc.Preset]; ok {
			st.preset = &p
		} else {
			names := presetNames(l.cat)
			l.probs.addf(path+".preset", "unknown preset %s%s; presets: %s", l.dec.quote(path+".preset", pc.Preset), didYouMean(pc.Preset, names), quoteList(names))
		}
	}
	if st.dialect != DialectOpenAI && st.dialect != DialectGemini {
		l.probs.addf(path+".dialect", "unknown dialect %s; want openai or gemini", l.dec.quote(path+".dialect", pc.Dialect))
	}
	l.validateBaseURL(st, path)
	l.validateKey(pc, path)
	for _, h := range sortedKeys(pc.Headers) {
		if h == "" || strings.ContainsAny(h, " :\t\r\n") {
			l.probs.addf(joinPath(path+".headers", h), "not a valid header name")
		}
	}
	l.validateLimits(path+".limits", pc.Limits)
	if r, err := parseReset(pc.Reset); err != nil {
		l.envSafe(path+".reset", err)
	} else {
		st.reset = r
	}
	for _, id := range l.dec.keys[path+".models"] {
		l.validateModel(joinPath(path+".models", id), pc.Models[id])
	}
}

func (l *loader) validateBaseURL(st *provState, path string) {
	raw := st.cfg.BaseURL
	if raw == "" && st.preset != nil {
		x, err := expand(st.preset.BaseURL, l.env)
		if err != nil {
			l.probs.addf(path, "preset base URL: %s", err.Error())
			return
		}
		for _, v := range x.vars {
			if l.env(v) == "" {
				st.missing = append(st.missing, v)
			}
		}
		raw = x.value
	}
	st.baseURL = strings.TrimRight(strings.TrimSpace(raw), "/")
	if len(st.missing) > 0 {
		// Disabled at compile; show what is missing rather than "accounts//ai".
		st.baseURL = st.preset.BaseURL
		return
	}
	if st.baseURL == "" {
		if st.cfg.Preset != "" && st.preset == nil {
			return // the unknown preset is the problem
		}
		l.probs.addf(path+".base_url", "required for a provider without a preset (write, say, base_url: http://127.0.0.1:11434/v1)")
		return
	}
	u, err := url.Parse(st.baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		l.probs.addf(path+".base_url", "%s is not an http:// or https:// URL", l.dec.quote(path+".base_url", st.baseURL))
	}
}

func (l *loader) validateKey(pc *ProviderConfig, path string) {
	if pc.APIKey.set && (pc.APIKey.Literal || len(pc.APIKey.Vars) > 0) && pc.APIKeyFile != "" {
		l.probs.addf(path+".api_key_file", "set api_key or api_key_file, not both")
		return
	}
	if pc.APIKey.Literal {
		l.probs.addf(path+".api_key", "a key written in the file is refused: write api_key: ${GROQ_API_KEY} (any variable name) or api_key_file: /run/secrets/groq")
		return
	}
	for _, v := range pc.APIKey.Vars {
		if !keyVarName(v) {
			// Not quoted: what sits between ${ and } may be a pasted key.
			l.probs.addf(path+".api_key", "${...} must name an environment variable in capitals, such as ${GROQ_API_KEY}")
			return
		}
	}
}

func (l *loader) validateLimits(path string, lim LimitsConfig) {
	for _, f := range []struct {
		name string
		v    *int
	}{{"rpm", lim.RPM}, {"rpd", lim.RPD}, {"tpm", lim.TPM}, {"tpd", lim.TPD}, {"rph", lim.RPH}, {"tph", lim.TPH}, {"tpmo", lim.TPMo}, {"rpmo", lim.RPMo}} {
		if f.v != nil && *f.v < 0 {
			l.probs.addf(path+"."+f.name, "%d is negative; write 0 for no limit", *f.v)
		}
	}
}

func (l *loader) validateModel(path string, m *ModelConfig) {
	if m == nil {
		return
	}
	l.validateLimits(path, LimitsConfig{RPM: m.RPM, RPD: m.RPD, TPM: m.TPM, TPD: m.TPD, RPH: m.RPH, TPH: m.TPH, TPMo: m.TPMo, RPMo: m.RPMo})
	if m.Reset != "" {
		if _, err := parseReset(m.Reset); err != nil {
			l.envSafe(path+".reset", err)
		}
	}
	for _, f := range []struct {
		name string
		v    *int
	}{{"max_context", m.MaxContext}, {"max_output", m.MaxOutput}} {
		if f.v != nil && *f.v < 0 {
			l.probs.addf(path+"."+f.name, "%d is negative; write 0 for unknown", *f.v)
		}
	}
	if m.Plentiful != nil && m.Scarce != nil && *m.Plentiful && *m.Scarce {
		l.probs.addf(path+".scarce", "a model cannot be both plentiful and scarce")
	}
	if m.Schema != "" {
		if _, err := parseSchemaSupport(m.Schema); err != nil {
			l.envSafe(path+".schema", err)
		}
	}
	if m.Dimensions != nil && *m.Dimensions < 0 {
		l.probs.addf(path+".dimensions", "%d is negative; write 0 for unknown", *m.Dimensions)
	}
	switch m.Continuation {
	case "", "auto", "prefix", "instruct", "off":
	default:
		l.probs.addf(path+".continuation", "%s is not auto, prefix, instruct or off", l.dec.quote(path+".continuation", m.Continuation))
	}
	if m.CanContinue != nil {
		// Issue 13: continuation is on by default; the old opt-in would
		// now say less than it seems to, so it is refused by name.
		l.probs.addf(path+".can_continue", "replaced by continuation, which is on by default (auto: the provider's best method); remove can_continue, or write continuation: prefix (was true) or continuation: off (never continue on this model)")
	}
}

// parseReset parses "rolling", "midnight" (UTC) or "midnight <zone>".
func parseReset(s string) (Reset, error) {
	f := strings.Fields(s)
	bad := fmt.Errorf(`%q is not a reset (write "midnight UTC", "midnight America/Los_Angeles" or "rolling")`, s)
	switch {
	case len(f) == 1 && f[0] == "rolling":
		return Reset{Kind: ResetRolling, Location: time.UTC}, nil
	case len(f) == 1 && f[0] == "midnight":
		return Reset{Kind: ResetMidnight, Location: time.UTC}, nil
	case len(f) == 2 && f[0] == "midnight":
		if f[1] == "UTC" {
			return Reset{Kind: ResetMidnight, Location: time.UTC}, nil
		}
		if f[1] == "Local" || strings.Contains(f[1], "..") {
			return Reset{}, bad
		}
		loc, err := time.LoadLocation(f[1])
		if err != nil {
			return Reset{}, fmt.Errorf("%q names no time zone the system knows (write an IANA name such as America/Los_Angeles, or UTC)", f[1])
		}
		return Reset{Kind: ResetMidnight, Location: loc}, nil
	}
	return Reset{}, bad
}

func (l *loader) validateChain(name string) {
	c := l.f.Chains[name]
	path := joinPath("chains", name)
	report := func(sub, format string, args ...any) {
		if v, ok := l.roleVar[name]; ok {
			l.probs.addEnv(v, fmt.Sprintf(format, args...))
			return
		}
		p := path
		if sub != "" {
			p = path + "." + sub
		}
		l.probs.addf(p, format, args...)
	}
	if name == "" || strings.ContainsAny(name, "/ \t") {
		report("", "a chain's name cannot be empty or hold / or spaces (clients send it as the model)")
	}
	l.validateRoutes(name, c, report)
	at, dl, hd := time.Duration(*c.AttemptTimeout), time.Duration(*c.Deadline), time.Duration(*c.HedgeDelay)
	switch {
	case at <= 0:
		report("attempt_timeout", "must be more than 0 (write, say, 20s)")
	case dl < at:
		report("deadline", "%s is shorter than attempt_timeout %s; the deadline caps every attempt together", dl, at)
	}
	validateFirstToken(c, at, report)
	if hd > 0 && at > 0 && hd >= at {
		report("hedge_delay", "%s is not shorter than attempt_timeout %s, so a hedge could never start", hd, at)
	}
	if *c.MaxInFlight < 1 {
		report("max_in_flight", "must be 1 or more")
	} else if hd > 0 && *c.MaxInFlight < 2 {
		report("hedge_delay", "hedging needs max_in_flight of 2 or more")
	}
	if *c.HedgeMinDaily < 0 {
		report("hedge_min_daily", "%d is negative", *c.HedgeMinDaily)
	}
	if m := *c.Margin; !(m >= 0 && m < 0.5) {
		report("margin", "%v is outside [0, 0.5) (write, say, 0.05)", m)
	}
	switch *c.Pace {
	case "on", "off":
	default:
		report("pace", "%q is neither on nor off (pacing is on by default; write pace: off to keep the chain's order at every hour)", *c.Pace)
	}
	if n := *c.SchemaRepairs; n < 0 || n > maxSchemaRepairs {
		report("schema_repairs", "%d is outside 0..%d; each repair is a call while the caller waits", n, maxSchemaRepairs)
	}
	// A negative blip_wait is the decoder's to refuse, as every duration.
	if bw := time.Duration(*c.BlipWait); bw > dl/2 {
		report("blip_wait", "%s is more than half the deadline %s, which would leave the retry little time to answer (write, say, 5s)", bw, dl)
	}
	if c.KeepExchanges < 0 {
		report("keep_exchanges", "%d is negative; 0 sends every exchange", c.KeepExchanges)
	}
	if c.Reasoning != "pass" && c.Reasoning != "drop" {
		report("reasoning", "%s is neither pass nor drop", l.dec.quote(path+".reasoning", c.Reasoning))
	}
	if *c.IdleTimeout <= 0 {
		report("idle_timeout", "must be more than 0 (write, say, 30s)")
	}
	if c.WaitCap != nil && *c.WaitCap > 0 {
		if *c.Interactive {
			report("wait_cap", "interactive chains never wait; set interactive: false to wait")
		} else if time.Duration(*c.WaitCap) > dl {
			report("wait_cap", "%s is longer than the deadline %s", *c.WaitCap, dl)
		}
	}
	l.validateAssistant(path+".assistant", c.Assistant, report)
	l.validateEmbeddingRoutes(c, report)
	// A search may name a message for when nothing matches; otherwise one
	// kind of fallback.
	fb := c.Fallback
	switch {
	case fb.Error && (fb.Message != "" || fb.Search != ""):
		report("fallback", `{error: true} stands alone; want {message: "..."}, {error: true}, {search: ./content} or {search: ./content, message: "..."}`)
	case !fb.Error && fb.Message == "" && fb.Search == "":
		report("fallback", `want one of {message: "..."}, {error: true}, {search: ./content} or {search: ./content, message: "..."}`)
	}
}

// validateFirstToken checks first_token_timeout against attempt_timeout
// at, which caps it: a longer one would be a setting that does nothing.
func validateFirstToken(c *ChainConfig, at time.Duration, report func(sub, format string, args ...any)) {
	switch ft := time.Duration(*c.FirstTokenTimeout); {
	case ft <= 0:
		report("first_token_timeout", "must be more than 0 (write, say, 10s)")
	case at > 0 && ft > at:
		report("first_token_timeout", "%s is longer than attempt_timeout %s, which caps the wait for a first token too; write at most %s, or raise attempt_timeout", ft, at, at)
	}
}

func (l *loader) validateRoutes(chain string, c *ChainConfig, report func(sub, format string, args ...any)) {
	if len(c.Routes) == 0 {
		report("routes", "a chain needs at least one route (write, say, routes: [groq/llama-3.3-70b-versatile])")
		return
	}
	seen := map[string]int{}
	prevRank, firstCanon, firstIdx := 0, "", -1
	for i, ref := range c.Routes {
		sub := fmt.Sprintf("routes[%d]", i)
		id := strings.TrimSpace(ref.Route)
		if j, dup := seen[id]; dup {
			report(sub, "%q is listed twice (first as routes[%d])", id, j)
			continue
		}
		seen[id] = i
		switch {
		case ref.Rank < 0:
			report(sub+".rank", "%d is negative", ref.Rank)
		case ref.Rank > 0 && ref.Rank < prevRank:
			report(sub+".rank", "rank %d comes after rank %d; list routes in rank order", ref.Rank, prevRank)
		case ref.Rank > 0:
			prevRank = ref.Rank
		default:
			prevRank++ // as compiled: one more than the route before
		}
		st, spec, msg := l.lookupRoute(id)
		if msg != "" {
			report(sub, "%s", msg)
			continue
		}
		if kinds, ok := l.roleKinds[chain]; ok {
			if want, _ := roleDialect(kinds[i]); want != st.dialect {
				report(sub, "route %d is %s but provider %s speaks %s", i+1, kinds[i], st.name, st.dialect)
			}
		}
		if c.SameModel {
			if firstIdx < 0 {
				firstCanon, firstIdx = spec.canonical, i
			} else if !strings.EqualFold(spec.canonical, firstCanon) {
				report(sub, "same_model chain: %s is model %s, but routes[%d] %s is model %s (set canonical: on the model if they are the same)",
					id, spec.canonical, firstIdx, strings.TrimSpace(c.Routes[firstIdx].Route), firstCanon)
			}
		}
	}
}

// lookupRoute resolves "provider/model"; msg says what is wrong, if anything.
func (l *loader) lookupRoute(id string) (*provState, modelSpec, string) {
	prov, model, ok := strings.Cut(id, "/")
	if !ok || prov == "" || model == "" {
		return nil, modelSpec{}, fmt.Sprintf("%q is not provider/model (write, say, groq/llama-3.3-70b-versatile)", id)
	}
	st, ok := l.provs[prov]
	if !ok {
		names := slices.Clone(l.provOrder)
		sort.Strings(names)
		hint := didYouMean(prov, names)
		if len(names) == 0 {
			return nil, modelSpec{}, fmt.Sprintf("unknown provider %q in route %q; providers: is empty", prov, id)
		}
		return nil, modelSpec{}, fmt.Sprintf("unknown provider %q in route %q%s; providers are: %s", prov, id, hint, quoteList(names))
	}
	spec, known := l.modelSpec(st, model)
	if !known && st.preset != nil && !st.preset.acceptsAny(model) {
		ids := l.knownModels(st)
		hint := ""
		if m, ok := closest(model, ids); ok {
			hint = fmt.Sprintf(" (did you mean %q?)", prov+"/"+m)
		}
		msg := fmt.Sprintf("unknown route %q%s; %s's models are: %s", id, hint, prov, quoteList(ids))
		if st.preset.AnyModelSuffix != "" {
			msg += ", or any id ending in " + st.preset.AnyModelSuffix
		}
		return nil, modelSpec{}, msg + " (add others under providers." + prov + ".models)"
	}
	return st, spec, ""
}

// knownModels lists a provider's models: its preset's, then its config's.
func (l *loader) knownModels(st *provState) []string {
	var ids []string
	if st.preset != nil {
		for _, m := range st.preset.Models {
			ids = append(ids, m.ID)
		}
	}
	for _, id := range l.dec.keys[joinPath("providers", st.name)+".models"] {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// validateServerLimits checks the limits that bound one request's work
// (issue 10). Zero takes the default, so only a negative is wrong (a
// negative duration or size does not parse).
func (l *loader) validateServerLimits() {
	sv := &l.f.Server
	if sv.MaxConnections < 0 {
		l.probs.addf("server.max_connections", "must be more than 0")
	}
	if sv.MaxMessages < 0 {
		l.probs.addf("server.max_messages", "must be more than 0")
	}
	if sv.MaxContent < 0 {
		l.probs.addf("server.max_content", "must be more than 0")
	}
	if sv.MaxRequests < 0 {
		l.probs.addf("server.max_requests", "must be more than 0")
	}
	if sv.QueueLength < 0 {
		l.probs.addf("server.queue_length", "%d is negative; write 0 for the default", sv.QueueLength)
	}
	if k := time.Duration(*sv.StreamKeepAlive); k > 0 && k < time.Second {
		l.probs.addf("server.stream_keepalive", "%s is under 1s: a keep-alive that often is only traffic (write, say, 10s, or 0s for none)", k)
	}
}
