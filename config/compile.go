package config

import (
	"encoding/json"
	"maps"
	"math"
	"os"
	"sort"
	"strings"
	"time"
)

// modelSpec is a model resolved from its preset entry and its config.
type modelSpec struct {
	limits       Limits
	reset        string
	timeout      time.Duration
	maxContext   int
	maxOutput    int
	extra        map[string]json.RawMessage
	plentiful    bool
	scarce       bool
	reasoning    bool
	prefix       bool   // the preset says the model honours a prefix continuation
	continuation string // the config's method, "" for auto
	canonical    string
	schema       string // "enforce", "json", "none"; "" for none
	caps         Capabilities
	embedding    bool
	dimensions   int
}

// modelSpec merges a model's preset entry with its config; known is false
// when neither lists it.
func (l *loader) modelSpec(st *provState, id string) (spec modelSpec, known bool) {
	if st.cfg.Timeout != nil {
		spec.timeout = time.Duration(*st.cfg.Timeout)
	}
	if st.preset != nil {
		if pm, ok := st.preset.Model(id); ok {
			known = true
			spec.limits, spec.maxContext, spec.maxOutput = pm.Limits, pm.MaxContext, pm.MaxOutput
			spec.reasoning, spec.prefix, spec.canonical = pm.Reasoning, pm.Prefix, pm.Canonical
			spec.caps = Capabilities{Tools: pm.Tools, Vision: pm.Vision, Audio: pm.Audio}
			spec.embedding, spec.dimensions = pm.Embedding, pm.Dimensions
		}
		spec.schema = st.preset.schemaOf(id)
		spec.prefix = spec.prefix || st.preset.Prefix
	}
	var scarceSet bool
	if m, ok := st.cfg.Models[id]; ok {
		known = true
		if m != nil {
			override(&spec.limits.RPM, m.RPM)
			override(&spec.limits.RPD, m.RPD)
			override(&spec.limits.TPM, m.TPM)
			override(&spec.limits.TPD, m.TPD)
			override(&spec.limits.RPH, m.RPH)
			override(&spec.limits.TPH, m.TPH)
			override(&spec.limits.TPMo, m.TPMo)
			override(&spec.limits.RPMo, m.RPMo)
			override(&spec.maxContext, m.MaxContext)
			override(&spec.maxOutput, m.MaxOutput)
			override(&spec.plentiful, m.Plentiful)
			override(&spec.scarce, m.Scarce)
			override(&spec.reasoning, m.Reasoning)
			spec.continuation = m.Continuation
			if m.Timeout != nil {
				spec.timeout = time.Duration(*m.Timeout)
			}
			if m.Canonical != "" {
				spec.canonical = m.Canonical
			}
			if m.Schema != "" {
				spec.schema = m.Schema
			}
			overrideCap(&spec.caps.Tools, m.Tools)
			overrideCap(&spec.caps.Vision, m.Vision)
			overrideCap(&spec.caps.Audio, m.Audio)
			override(&spec.embedding, m.Embedding)
			override(&spec.dimensions, m.Dimensions)
			spec.reset = m.Reset
			if len(m.Extra) > 0 {
				spec.extra = make(map[string]json.RawMessage, len(m.Extra))
				for k, v := range m.Extra {
					spec.extra[k] = json.RawMessage(v)
				}
			}
			scarceSet = m.Scarce != nil || m.Plentiful != nil && *m.Plentiful
		}
	}
	if spec.canonical == "" {
		spec.canonical = defaultCanonical(id)
	}
	if !scarceSet {
		// Scarce: any model whose daily requests, its own or its account's,
		// are 50 or fewer: such a model must not spend its day on hedges.
		rpd := spec.limits.RPD
		if acct := derefInt(st.cfg.Limits.RPD); acct > 0 && (rpd == 0 || acct < rpd) {
			rpd = acct
		}
		spec.scarce = rpd > 0 && rpd <= 50
	}
	return spec, known
}

// method resolves the model's continuation method: the config's, or for
// auto (and unset) prefix where the preset says the model honours one, else
// instruct, which any chat model can follow.
func (spec modelSpec) method() Continuation {
	switch spec.continuation {
	case "prefix":
		return ContinuePrefix
	case "instruct":
		return ContinueInstruct
	case "off":
		return ContinueOff
	}
	if spec.prefix {
		return ContinuePrefix
	}
	return ContinueInstruct
}

// overrideCap sets a capability the config file states.
func overrideCap(dst *Capability, src *bool) {
	if src != nil {
		*dst = capOf(src)
	}
}

func override[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}

func derefInt(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// defaultCanonical strips a publisher prefix and a :free suffix:
// "openai/gpt-oss-120b:free" is "gpt-oss-120b".
func defaultCanonical(id string) string {
	id = strings.TrimSuffix(id, ":free")
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		id = id[i+1:]
	}
	return id
}

// compile is stage four: build the immutable Plan from a valid File.
func (l *loader) compile() *Plan {
	f := &l.f
	p := &Plan{
		Listen:    f.Listen,
		DataDir:   f.DataDir,
		Providers: map[string]*Provider{},
		Routes:    map[string]*Route{},
		Chains:    map[string]*Chain{},
		CallLog:   f.CallLog,
		Redis:     f.Redis,
		Server: Server{
			MaxBodyBytes:             int64(f.Server.MaxBody),
			ReadHeaderTimeout:        time.Duration(f.Server.ReadHeaderTimeout),
			ReadTimeout:              time.Duration(f.Server.ReadTimeout),
			IdleTimeout:              time.Duration(f.Server.IdleTimeout),
			ShutdownGrace:            time.Duration(f.Server.ShutdownGrace),
			WriteTimeout:             time.Duration(f.Server.WriteTimeout),
			MaxConnections:           f.Server.MaxConnections,
			MaxConnectionsPerAddress: f.Server.MaxConnectionsPerAddress,
			MaxMessages:              f.Server.MaxMessages,
			MaxContentBytes:          int64(f.Server.MaxContent),
			MaxRequests:              f.Server.MaxRequests,
			QueueLength:              f.Server.QueueLength,
			QueueWait:                time.Duration(f.Server.QueueWait),
			StreamKeepAlive:          time.Duration(*f.Server.StreamKeepAlive),
		},
		Rest: RestTimes{
			Empty:      time.Duration(f.Rest.Empty),
			MinuteMin:  time.Duration(f.Rest.MinuteMin),
			MinuteMax:  time.Duration(f.Rest.MinuteMax),
			DayUnknown: time.Duration(f.Rest.DayUnknown),
			Auth:       time.Duration(f.Rest.Auth),
			Gone:       time.Duration(f.Rest.Gone),
			BadConfig:  time.Duration(f.Rest.BadConfig),
			Overloaded: time.Duration(f.Rest.Overloaded),
			Timeout:    time.Duration(f.Rest.Timeout),
			Growth:     *f.Rest.Growth,
			GrowthMax:  time.Duration(f.Rest.GrowthMax),
		},
	}
	p.Media = Media{FetchHosts: f.Media.FetchHosts, MaxBytes: int64(f.Media.MaxBytes), Timeout: time.Duration(*f.Media.Timeout)}
	l.compileCallers(p)
	p.statusSetting = f.Status
	for _, name := range l.provOrder {
		p.Providers[name] = l.compileProvider(l.provs[name])
		p.ProviderOrder = append(p.ProviderOrder, name)
	}
	for _, name := range l.chainOrder {
		p.Chains[name] = l.compileChain(p, name, f.Chains[name])
		p.ChainOrder = append(p.ChainOrder, name)
	}
	p.RouteChains = l.routeChains(p)
	p.base = l
	p.decideStatus() // after the chains: hide_route makes it private
	compileSecrets(p)
	return p
}

func (l *loader) compileProvider(st *provState) *Provider {
	pc := st.cfg
	p := &Provider{
		Name:    st.name,
		Preset:  pc.Preset,
		Flavor:  "generic",
		Dialect: st.dialect,
		BaseURL: st.baseURL,
		Headers: maps.Clone(pc.Headers),
		Limits: Limits{
			RPM: derefInt(pc.Limits.RPM), RPD: derefInt(pc.Limits.RPD),
			TPM: derefInt(pc.Limits.TPM), TPD: derefInt(pc.Limits.TPD),
			RPH: derefInt(pc.Limits.RPH), TPH: derefInt(pc.Limits.TPH),
			TPMo: derefInt(pc.Limits.TPMo), RPMo: derefInt(pc.Limits.RPMo),
		},
		Reset: st.reset,
	}
	if st.preset != nil {
		p.Flavor = st.preset.Flavor
	}
	needsKey := st.preset != nil && st.preset.KeyEnv != "" && !st.preset.KeyOptional
	if st.preset != nil && st.preset.KeyOptional {
		// Said in check's KEY column; replaced below when a key is set.
		p.KeySource = "none (keyless; " + st.preset.KeyEnv + " for more)"
	}
	switch {
	case pc.APIKeyFile != "":
		needsKey = true
		p.KeySource = "file " + pc.APIKeyFile
		b, err := os.ReadFile(pc.APIKeyFile)
		switch {
		case err != nil:
			p.Disabled, p.DisabledReason = true, "no key: cannot read "+pc.APIKeyFile
		default:
			p.APIKey = strings.TrimSpace(string(b))
		}
	case len(pc.APIKey.Vars) > 0:
		needsKey = true
		p.APIKey = strings.TrimSpace(pc.APIKey.Value)
		p.KeySource = "env " + pc.APIKey.Vars[0]
	}
	if !p.Disabled && needsKey && p.APIKey == "" {
		p.Disabled = true
		switch {
		case pc.APIKeyFile != "":
			p.DisabledReason = "no key: " + pc.APIKeyFile + " is empty"
		case len(pc.APIKey.Vars) > 0:
			p.DisabledReason = "no key: set " + pc.APIKey.Vars[0]
		default:
			p.DisabledReason = "no key: set api_key"
		}
	}
	if len(st.missing) > 0 && !p.Disabled {
		p.Disabled, p.DisabledReason = true, "no base URL: set "+strings.Join(st.missing, ", ")
	}
	return p
}

func (l *loader) compileChain(p *Plan, name string, c *ChainConfig) *Chain {
	ch := &Chain{
		Name:              name,
		AttemptTimeout:    time.Duration(*c.AttemptTimeout),
		FirstTokenTimeout: time.Duration(*c.FirstTokenTimeout),
		Deadline:          time.Duration(*c.Deadline),
		HedgeDelay:        time.Duration(*c.HedgeDelay),
		MaxInFlight:       *c.MaxInFlight,
		HedgeMinDaily:     *c.HedgeMinDaily,
		Margin:            *c.Margin,
		Pace:              *c.Pace == "on",
		LatencyAware:      c.LatencyAware,
		SameModel:         c.SameModel,
		Interactive:       *c.Interactive,
		HideRoute:         c.HideRoute || c.Assistant != nil, // visitors never see the route (issue 14)
		FailoverOnRefusal: c.FailoverOnRefusal,
		RetryBlips:        *c.RetryBlips,
		BlipWait:          time.Duration(*c.BlipWait),
		KeepExchanges:     c.KeepExchanges,
		TrimSystem:        c.TrimSystem,
		RequireSchema:     c.RequireSchema,
		SchemaRepairs:     *c.SchemaRepairs,
		TypedCalls:        *c.TypedCalls,
		CacheTTL:          time.Duration(*c.CacheTTL),
		ContentVersion:    c.ContentVersion,
		Reasoning:         c.Reasoning,
		IdleTimeout:       time.Duration(*c.IdleTimeout),
		Callers:           l.callers.chainLimits[name],
		Assistant:         compileAssistant(c.Assistant),
	}
	if c.WaitCap != nil {
		ch.WaitCap = time.Duration(*c.WaitCap)
	}
	switch fb := c.Fallback; {
	case fb.Search != "":
		ch.Fallback = Fallback{Kind: FallbackSearch, Content: fb.Search, Message: fb.Message}
	case fb.Message != "":
		ch.Fallback = Fallback{Kind: FallbackMessage, Message: fb.Message}
	default:
		ch.Fallback = Fallback{Kind: FallbackError}
	}
	rank, prevTier := 0, 0
	for _, ref := range c.Routes {
		id := strings.TrimSpace(ref.Route)
		if IsPattern(id) {
			ch.Patterns = append(ch.Patterns, id) // expanded by Expand (pattern.go)
			continue
		}
		r, ok := p.Routes[id]
		if !ok {
			r = l.compileRoute(p, id)
			p.Routes[id] = r
			p.RouteOrder = append(p.RouteOrder, id)
		}
		switch {
		case ref.tier > 0 && ref.tier == prevTier:
			// The tier's routes share a rank.
		case ref.Rank > 0:
			rank = ref.Rank
		default:
			rank++
		}
		prevTier = ref.tier
		ch.Routes = append(ch.Routes, r)
		ch.Ranks = append(ch.Ranks, rank)
	}
	renewableFirst(ch, c.Routes)
	// Validated: a chain's routes are all embedding models or none.
	ch.Embeddings = len(ch.Routes) > 0 && ch.Routes[0].Embedding
	ch.PerRequestVectors = ch.Embeddings && c.Vectors == VectorsPerRequest
	return ch
}

func (l *loader) compileRoute(p *Plan, id string) *Route {
	provName, model, _ := strings.Cut(id, "/")
	st := l.provs[provName]
	prov := p.Providers[provName]
	spec, _ := l.modelSpec(st, model)
	r := &Route{
		ID:           id,
		Provider:     prov,
		Model:        model,
		Canonical:    spec.canonical,
		Limits:       spec.limits,
		Reset:        prov.Reset,
		Timeout:      spec.timeout,
		MaxContext:   spec.maxContext,
		MaxOutput:    spec.maxOutput,
		Extra:        spec.extra,
		Plentiful:    spec.plentiful,
		Scarce:       spec.scarce,
		Reasoning:    spec.reasoning,
		Continuation: spec.method(),
		Caps:         spec.caps,
		Embedding:    spec.embedding,
		Dimensions:   spec.dimensions,
	}
	r.Schema, _ = parseSchemaSupport(spec.schema) // validated; "" is none
	if spec.reset != "" {
		if rs, err := parseReset(spec.reset); err == nil {
			r.Reset = rs
		}
	}
	if prov.Disabled {
		r.Disabled, r.DisabledReason = true, prov.DisabledReason
	}
	return r
}

// renewableFirst orders the routes of each tier of ch (refs, flattened,
// give the tiers) by how soon their limits renew (issue 31, item 4): the
// route whose day cap is largest beside its minute rate first, a route
// without a day cap before any with one, so that the scarce route is kept
// for when the renewable one is full. Routes of equal renewal keep the
// order written.
func renewableFirst(ch *Chain, refs []RouteRef) {
	for i := 0; i < len(refs); {
		j := i + 1
		for refs[i].tier > 0 && j < len(refs) && refs[j].tier == refs[i].tier {
			j++
		}
		if j-i > 1 {
			sort.SliceStable(ch.Routes[i:j], func(a, b int) bool {
				return Renewal(ch.Routes[i+a]) > Renewal(ch.Routes[i+b])
			})
		}
		i = j
	}
}

// Renewal says how soon a route's configured limits renew: its day (or
// month) cap over what its minute limit would allow in as long, the
// smallest over requests and tokens, of the route and its provider. +Inf
// for a route without a day or month cap; 0 for a cap with no minute limit
// beside it. The larger, the sooner a route that is full has room again.
func Renewal(r *Route) float64 {
	out := math.Inf(1)
	for _, l := range []Limits{r.Limits, providerLimits(r)} {
		for _, p := range [...]struct {
			long, minute int
			minutes      float64
		}{{l.RPD, l.RPM, 1440}, {l.TPD, l.TPM, 1440}, {l.RPMo, l.RPM, 43200}, {l.TPMo, l.TPM, 43200}} {
			if p.long <= 0 {
				continue
			}
			v := 0.0
			if p.minute > 0 {
				v = float64(p.long) / (float64(p.minute) * p.minutes)
			}
			out = math.Min(out, v)
		}
	}
	return out
}

func providerLimits(r *Route) Limits {
	if r.Provider == nil {
		return Limits{}
	}
	return r.Provider.Limits
}
