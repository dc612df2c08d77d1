package config

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"time"
)

// Load reads the config file at path and compiles it: see Parse. Problems
// name the file as path was given.
func Load(path string, env func(string) string) (*Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load config: %w", err)
	}
	return Parse(path, data, env)
}

// Parse compiles the YAML config data, named name in problems, into a Plan.
// env looks up environment variables (os.Getenv; nil means none are set):
// for ${NAME} references, the presets' key variables and the role
// variables. It runs the stages in order (decode, defaults, validate,
// compile) and returns every problem together as an *Error. It never panics,
// whatever data holds.
func Parse(name string, data []byte, env func(string) string) (*Plan, error) {
	l := newLoader(name, env)
	l.decode(data)
	l.applyDefaults()
	l.validate()
	if err := l.probs.err(); err != nil {
		return nil, err
	}
	return l.compile(), nil
}

// loader carries one file through the stages.
type loader struct {
	name  string
	env   func(string) string
	cat   map[string]Preset
	dec   *decoder
	probs *problems
	f     File

	provOrder  []string
	chainOrder []string
	// roleVar names the environment variable that defined a role chain.
	roleVar map[string]string
	// roleKinds holds each role chain's route kinds, to check dialects.
	roleKinds map[string][]string
	// provs are the providers resolved against their presets.
	provs map[string]*provState
	// callers holds who may call, resolved during validation (keys read
	// from the environment and files, proxies parsed).
	callers callerState
}

func newLoader(name string, env func(string) string) *loader {
	if env == nil {
		env = func(string) string { return "" }
	}
	dec := &decoder{lines: map[string]int{}, keys: map[string][]string{}, envVar: map[string]string{}}
	probs := newProblems(name, dec.lineOf)
	dec.probs = probs
	return &loader{
		name: name, env: env, cat: presetCatalog(), dec: dec, probs: probs,
		roleVar: map[string]string{}, roleKinds: map[string][]string{},
		provs: map[string]*provState{},
	}
}

// decode is stage one: YAML into File.
func (l *loader) decode(data []byte) {
	root := parseTree(data, l.env, l.probs)
	if root == nil {
		return
	}
	l.dec.lines[""] = root.line
	nestFields(root, data, l.probs)
	if root.kind == nullNode {
		return
	}
	l.dec.decode(root, "", reflect.ValueOf(&l.f).Elem())
	l.provOrder = append(l.provOrder, l.dec.keys["providers"]...)
	l.chainOrder = append(l.chainOrder, l.dec.keys["chains"]...)
}

// Chain defaults (see Chain in plan.go).
const (
	defaultAttemptTimeout = 20 * time.Second
	defaultDeadline       = 60 * time.Second
	defaultMaxInFlight    = 2
	defaultHedgeMinDaily  = 100
	defaultMargin         = 0.05
	defaultWaitCap        = 2 * time.Minute
	defaultIdleTimeout    = 30 * time.Second
	// DefaultBlipWait is a chain's blip_wait when the file says none.
	DefaultBlipWait = 5 * time.Second
)

// defaultFirstToken is a chain's first-token timeout (issue 13: a first
// token 20 s late used to be waited for; a user gives up well before).
const defaultFirstToken = 10 * time.Second

// defaultKeepAlive is how often a silent stream gets an SSE keep-alive
// comment (issue 13). The idle cuts in front of a gateway are 30 s at the
// shortest: Heroku's router wants a first byte within 30 s, then one every
// 55 s (https://devcenter.heroku.com/articles/http-routing); CloudFront's
// origin response timeout defaults to 30 s; nginx's proxy_read_timeout to
// 60 s (https://nginx.org/en/docs/http/ngx_http_proxy_module.html);
// Cloudflare cuts at 100 s. 10 s stays under all of them with room for a
// late tick. It is also long enough that a request failing fast (a caller
// limit, a full queue of at most 2 s, every route resting, a 4xx) is
// answered before a comment commits the status, so it keeps its own HTTP
// status and Retry-After.
const defaultKeepAlive = 10 * time.Second

// defaultRoles are read when the file has no roles: list.
func defaultRoles() []string { return []string{"PLANNER_MODEL", "EXTRACTOR_MODEL", "JUDGE_MODEL"} }

// applyDefaults is stage two: fill what the file left out.
func (l *loader) applyDefaults() {
	f := &l.f
	setStr(&f.Listen, "127.0.0.1:8080")
	setStr(&f.DataDir, "./.tollfree")
	setDur(&f.Server.MaxBody, 4<<20)
	setDur(&f.Server.ReadHeaderTimeout, Duration(10*time.Second))
	setDur(&f.Server.ReadTimeout, Duration(30*time.Second))
	setDur(&f.Server.IdleTimeout, Duration(120*time.Second))
	setDur(&f.Server.ShutdownGrace, Duration(30*time.Second))
	// Issue 10: no request, client or connection may take unbounded work.
	setDur(&f.Server.WriteTimeout, Duration(30*time.Second))
	setDur(&f.Server.MaxContent, 2<<20)
	if f.Server.MaxConnections == 0 {
		f.Server.MaxConnections = 256
	}
	if f.Server.MaxMessages == 0 {
		f.Server.MaxMessages = 2048
	}
	// Issue 12: a burst waits briefly for a turn instead of piling onto
	// the providers.
	if f.Server.MaxRequests == 0 {
		f.Server.MaxRequests = 64
	}
	if f.Server.QueueLength == 0 {
		f.Server.QueueLength = 64
	}
	setDur(&f.Server.QueueWait, Duration(2*time.Second))
	if f.Server.StreamKeepAlive == nil {
		f.Server.StreamKeepAlive = ptr(Duration(defaultKeepAlive))
	}
	setStr(&f.ForwardedHeader, HeaderXForwardedFor)
	setDur(&f.Media.MaxBytes, 5<<20)
	if f.Media.Timeout == nil {
		f.Media.Timeout = ptr(Duration(5 * time.Second))
	}
	if v := f.VisitorIDs; v != nil {
		setDur(&v.TTL, Duration(DefaultVisitorTTL))
		setStr(&v.Cookie, DefaultVisitorCookie)
		setStr(&v.Header, DefaultVisitorHeader)
	}
	l.restDefaults()
	if f.Roles == nil {
		f.Roles = defaultRoles()
	}
	if f.Providers == nil {
		f.Providers = map[string]*ProviderConfig{}
	}
	if f.Chains == nil {
		f.Chains = map[string]*ChainConfig{}
	}
	l.addRoles()
	for _, name := range l.provOrder {
		if f.Providers[name] == nil {
			f.Providers[name] = &ProviderConfig{}
		}
		l.providerDefaults(name, f.Providers[name])
	}
	for _, name := range l.chainOrder {
		if f.Chains[name] == nil {
			f.Chains[name] = &ChainConfig{}
		}
		chainDefaults(f.Chains[name])
	}
}

func (l *loader) restDefaults() {
	r, d := &l.f.Rest, DefaultRestTimes()
	setDur(&r.Empty, Duration(d.Empty))
	setDur(&r.MinuteMin, Duration(d.MinuteMin))
	setDur(&r.MinuteMax, Duration(d.MinuteMax))
	setDur(&r.DayUnknown, Duration(d.DayUnknown))
	setDur(&r.Auth, Duration(d.Auth))
	setDur(&r.Gone, Duration(d.Gone))
	setDur(&r.BadConfig, Duration(d.BadConfig))
	setDur(&r.Overloaded, Duration(d.Overloaded))
	setDur(&r.Timeout, Duration(d.Timeout))
	setDur(&r.GrowthMax, Duration(d.GrowthMax))
	if r.Growth == nil {
		r.Growth = ptr(d.Growth)
	}
}

// providerDefaults fills a provider from its preset. A provider named
// after a preset takes that preset whatever else it sets: a gemini provider
// pointed at a proxy (base_url) is still Gemini, with its dialect, models,
// limits and Pacific-midnight reset; only the fields written in the file
// override the preset's (issue 10, item 11: base_url or dialect used to
// drop the preset silently, making such a provider OpenAI-dialect with a
// UTC reset).
func (l *loader) providerDefaults(name string, pc *ProviderConfig) {
	if pc.Preset == "" {
		if _, ok := l.cat[name]; ok {
			pc.Preset = name
		}
	}
	p, ok := l.cat[pc.Preset]
	if !ok {
		setStr(&pc.Dialect, string(DialectOpenAI))
		setStr(&pc.Reset, "midnight UTC")
		return
	}
	setStr(&pc.Dialect, string(p.Dialect))
	setStr(&pc.Reset, p.Reset)
	if pc.Timeout == nil && p.Timeout > 0 {
		pc.Timeout = ptr(Duration(p.Timeout))
	}
	setInt(&pc.Limits.RPM, p.Limits.RPM)
	setInt(&pc.Limits.RPD, p.Limits.RPD)
	setInt(&pc.Limits.TPM, p.Limits.TPM)
	setInt(&pc.Limits.TPD, p.Limits.TPD)
	setInt(&pc.Limits.RPH, p.Limits.RPH)
	setInt(&pc.Limits.TPH, p.Limits.TPH)
	setInt(&pc.Limits.TPMo, p.Limits.TPMo)
	setInt(&pc.Limits.RPMo, p.Limits.RPMo)
	if !pc.APIKey.set && pc.APIKeyFile == "" && p.KeyEnv != "" {
		// A keyless provider takes its key only when one is set.
		if v := l.env(p.KeyEnv); v != "" || !p.KeyOptional {
			pc.APIKey = Secret{Value: v, Vars: []string{p.KeyEnv}, set: true}
		}
	}
}

func chainDefaults(c *ChainConfig) {
	flattenTiers(c)
	if c.Interactive == nil {
		c.Interactive = ptr(true)
	}
	if c.AttemptTimeout == nil {
		c.AttemptTimeout = ptr(Duration(defaultAttemptTimeout))
	}
	if c.FirstTokenTimeout == nil {
		// Never past the attempt timeout, which caps it (a zero one is
		// reported as such, not here).
		ft := Duration(defaultFirstToken)
		if at := *c.AttemptTimeout; at > 0 && at < ft {
			ft = at
		}
		c.FirstTokenTimeout = &ft
	}
	if c.WaitCap == nil && !*c.Interactive {
		c.WaitCap = ptr(Duration(defaultWaitCap))
	}
	if c.Deadline == nil {
		d := Duration(defaultDeadline)
		if c.WaitCap != nil && !*c.Interactive {
			d = max(d, *c.WaitCap+*c.AttemptTimeout)
		}
		c.Deadline = &d
	}
	if c.HedgeDelay == nil {
		c.HedgeDelay = ptr(Duration(0))
	}
	if c.MaxInFlight == nil {
		c.MaxInFlight = ptr(defaultMaxInFlight)
	}
	if c.HedgeMinDaily == nil {
		c.HedgeMinDaily = ptr(defaultHedgeMinDaily)
	}
	if c.Margin == nil {
		c.Margin = ptr(defaultMargin)
	}
	if c.Pace == nil {
		c.Pace = ptr("on")
	}
	if c.RetryBlips == nil {
		c.RetryBlips = ptr(true)
	}
	if c.BlipWait == nil {
		// Half a short deadline: a wait that takes most of it leaves the
		// retry no time to answer (see validateChain).
		c.BlipWait = ptr(min(Duration(DefaultBlipWait), *c.Deadline/2))
	}
	if c.IdleTimeout == nil {
		c.IdleTimeout = ptr(Duration(defaultIdleTimeout))
	}
	if c.CacheTTL == nil {
		c.CacheTTL = ptr(Duration(0))
		if c.Assistant != nil {
			c.CacheTTL = ptr(Duration(defaultAssistantCacheTTL)) // seed 000: a week
		}
	}
	assistantDefaults(c.Assistant)
	setInt(&c.SchemaRepairs, DefaultSchemaRepairs)
	setStr(&c.Reasoning, "drop")
	if c.Fallback == nil {
		c.Fallback = &FallbackConfig{Error: true}
	}
}

func ptr[T any](v T) *T { return &v }

func setStr(s *string, def string) {
	if strings.TrimSpace(*s) == "" {
		*s = def
	}
}

func setDur[T ~int64](d *T, def T) {
	if *d == 0 {
		*d = def
	}
}

func setInt(p **int, def int) {
	if *p == nil {
		*p = ptr(def)
	}
}
