// Package discover reads each enabled provider's model list (issue 35) and
// takes a route whose model the provider no longer lists out of service
// before any request spends a call on it, and back in when the model
// reappears.
//
// Free offerings rotate model names every few weeks; a gone model used to
// be found only by calling it, once per instance, and shown as resting.
// Here a Discoverer reads the lists at start and then every Every (a day
// by default), off the request path: an OpenAI-compatible GET /models,
// Gemini's models.list, OpenRouter's /models with its prices. A route
// whose model is absent gets a rest of class gone in the state store, so
// every instance sharing the store skips it without a call, the status
// page shows it with the date it vanished, and the log says so once. A
// later list that has the model again lifts that rest. A list that cannot
// be read, that comes back empty, or that names none of the models the
// provider's routes use (another naming, more likely than every model
// retired at once) changes nothing: a provider's hiccup never takes its
// routes out.
//
// The state it keeps between reads, per provider, is a note
// ("discover|groq"): the date each of its routes' models went missing, and
// the free models it listed (OpenRouter: prompt and completion price 0),
// for `*:free` patterns and the status page.
package discover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/state"
)

// Store is what a Discoverer keeps its findings in; state.Store implements
// it.
type Store interface {
	SetRest(ctx context.Context, r state.Rest) error
	ClearRest(ctx context.Context, key string, manual bool) error
	SetNote(ctx context.Context, key string, value []byte, ttl time.Duration) error
	Notes(ctx context.Context, prefix string) (map[string][]byte, error)
}

// DefaultEvery is how often the lists are read again by default.
const DefaultEvery = 24 * time.Hour

// notePrefix names the notes a Discoverer keeps, one per provider.
const notePrefix = "discover|"

// Options configure a Discoverer.
type Options struct {
	Plan  *config.Plan
	Store Store
	// Client calls the providers; default a client with a 20 s timeout.
	Client *http.Client
	Clock  clock.Clock
	Logger *slog.Logger
	// Every is the time between reads; default DefaultEvery.
	Every time.Duration
	// AfterRefresh, when set, is called after each Refresh, on Run's
	// goroutine: the gateway expands its chains' patterns there.
	AfterRefresh func(ctx context.Context)
}

// Model is one model of a provider's list.
type Model struct {
	ID string `json:"id"`
	// Free is set when the list says the model costs nothing (OpenRouter:
	// prompt and completion price 0).
	Free bool `json:"free,omitempty"`
	// Priced is set when the list gives the model's prices (OpenRouter).
	Priced bool `json:"priced,omitempty"`
	// Context is the context length the list gives; 0 when it gives none.
	Context int `json:"context,omitempty"`
}

// Finding is what the last read of one provider's list found, as the
// state store keeps it.
type Finding struct {
	// Read is when the list was last read.
	Read time.Time `json:"read"`
	// Gone is, by route id, when the route's model was first found missing.
	Gone map[string]time.Time `json:"gone,omitempty"`
	// Models is the list as read.
	Models []Model `json:"models"`
}

// Discoverer reads the model lists. Start it with Run.
type Discoverer struct {
	o Options

	mu   sync.Mutex
	last map[string]Finding // by provider, as last written or read
}

// New returns a Discoverer for the plan's enabled providers.
func New(o Options) *Discoverer {
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 20 * time.Second}
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Every <= 0 {
		o.Every = DefaultEvery
	}
	return &Discoverer{o: o, last: map[string]Finding{}}
}

// Run reads every list now, then every Every, until ctx ends. Each wait
// is set before its read, so that whoever sees a read's finding may move
// a fake clock past the next one.
func (d *Discoverer) Run(ctx context.Context) {
	for {
		next := d.o.Clock.NewTimer(d.o.Every)
		d.Refresh(ctx)
		select {
		case <-ctx.Done():
			next.Stop()
			return
		case <-next.C():
		}
	}
}

// Refresh reads every enabled provider's list once and applies it.
func (d *Discoverer) Refresh(ctx context.Context) {
	for _, pr := range d.providers() {
		if ctx.Err() != nil {
			return
		}
		models, err := d.list(ctx, pr)
		if err != nil {
			d.o.Logger.Warn("model list not read: routes left as they were", "provider", pr.Name, "error", err.Error())
			continue
		}
		d.apply(ctx, pr, models)
	}
	if d.o.AfterRefresh != nil && ctx.Err() == nil {
		d.o.AfterRefresh(ctx)
	}
}

// Findings returns what the last reads found, by provider: this
// instance's, or another's kept in the store.
func (d *Discoverer) Findings(ctx context.Context) map[string]Finding {
	out := Stored(ctx, d.o.Store)
	d.mu.Lock()
	defer d.mu.Unlock()
	for k, f := range d.last {
		if f.Read.After(out[k].Read) {
			out[k] = f
		}
	}
	return out
}

// Stored returns the findings the state store keeps, by provider, as the
// last read of any instance sharing it left them; none when it cannot be
// read.
func Stored(ctx context.Context, st interface {
	Notes(ctx context.Context, prefix string) (map[string][]byte, error)
}) map[string]Finding {
	out := map[string]Finding{}
	notes, err := st.Notes(ctx, notePrefix)
	if err != nil {
		return out
	}
	for key, raw := range notes {
		var f Finding
		name := strings.TrimPrefix(key, notePrefix)
		if json.Unmarshal(raw, &f) == nil && f.Read.After(out[name].Read) {
			out[name] = f
		}
	}
	return out
}

// Lists returns the models of each finding as config.Plan.Expand takes
// them, by provider.
func Lists(findings map[string]Finding) map[string][]config.Listed {
	out := make(map[string][]config.Listed, len(findings))
	for name, f := range findings {
		l := make([]config.Listed, len(f.Models))
		for i, m := range f.Models {
			l[i] = config.Listed{ID: m.ID, Context: m.Context, Priced: m.Priced, Free: m.Free}
		}
		out[name] = l
	}
	return out
}

// providers are the plan's enabled providers, in config order.
func (d *Discoverer) providers() []*config.Provider {
	var out []*config.Provider
	for _, name := range d.o.Plan.ProviderOrder {
		if pr := d.o.Plan.Providers[name]; pr != nil && !pr.Disabled {
			out = append(out, pr)
		}
	}
	return out
}

// routesOf are the plan's routes at the provider, by id.
func (d *Discoverer) routesOf(pr *config.Provider) map[string]*config.Route {
	out := map[string]*config.Route{}
	for _, c := range d.o.Plan.Chains {
		for _, r := range c.Routes {
			if r.Provider == pr {
				out[r.ID] = r
			}
		}
	}
	return out
}

// apply records a list just read: the routes whose model it lacks are
// gone (since the first read that lacked it), the others are back.
func (d *Discoverer) apply(ctx context.Context, pr *config.Provider, models []Model) {
	now := d.o.Clock.Now()
	prev := d.Findings(ctx)[pr.Name]
	listed := make(map[string]bool, len(models))
	for _, m := range models {
		listed[m.ID] = true
	}
	f := Finding{Read: now, Gone: map[string]time.Time{}, Models: models}
	routes := d.routesOf(pr)
	ids := make([]string, 0, len(routes))
	anyListed := false
	for id, rt := range routes {
		ids = append(ids, id)
		anyListed = anyListed || listed[rt.Model]
	}
	sort.Strings(ids)
	if len(routes) > 0 && !anyListed {
		// A list naming none of the models this provider's routes use is
		// more likely another naming (aliases, a proxy's own list) than
		// every model retired at once: it changes nothing, and calls tell.
		d.o.Logger.Warn("model list names none of the routes' models: routes left as they were", "provider", pr.Name, "listed", len(models))
		return
	}
	for _, id := range ids {
		rt := routes[id]
		since, wasGone := prev.Gone[id]
		if listed[rt.Model] {
			if wasGone {
				if err := d.o.Store.ClearRest(ctx, id, false); err != nil && !errors.Is(err, state.ErrNotPersisted) {
					d.o.Logger.Warn("route back in the model list, but its rest not lifted", "route", id, "error", err.Error())
					f.Gone[id] = since
					continue
				}
				d.o.Logger.Info("route back: its model is in the provider's list again", "route", id, "gone_since", since.Format(time.DateOnly))
			}
			continue
		}
		if !wasGone {
			since = now
			d.o.Logger.Warn("route gone: its model is no longer in the provider's list; skipped without a call until it is back", "route", id, "provider", pr.Name)
		}
		f.Gone[id] = since
		// The rest outlives two reads, so that it ends by itself if the
		// reads stop; each read renews it.
		r := state.Rest{Key: id, Until: now.Add(2*d.o.Every + time.Hour), Class: failure.Gone.String(), Since: since,
			Reason: fmt.Sprintf("gone from %s's model list since %s", pr.Name, since.UTC().Format(time.DateOnly))}
		if err := d.o.Store.SetRest(ctx, r); err != nil && !errors.Is(err, state.ErrNotPersisted) {
			d.o.Logger.Warn("route gone, but its rest not recorded", "route", id, "error", err.Error())
		}
	}
	// A route no chain has now (a route pattern's match dropped) keeps its
	// date, and its rest is lifted once its model is listed again, for the
	// pattern to bring it back ready.
	for id, since := range prev.Gone {
		if _, ok := routes[id]; ok {
			continue
		}
		if !listed[strings.TrimPrefix(id, pr.Name+"/")] {
			f.Gone[id] = since
		} else if err := d.o.Store.ClearRest(ctx, id, false); err != nil && !errors.Is(err, state.ErrNotPersisted) {
			f.Gone[id] = since
		}
	}
	d.mu.Lock()
	d.last[pr.Name] = f
	d.mu.Unlock()
	if raw, err := json.Marshal(f); err == nil {
		if err := d.o.Store.SetNote(ctx, notePrefix+pr.Name, raw, 3*d.o.Every+time.Hour); err != nil && !errors.Is(err, state.ErrNotPersisted) {
			d.o.Logger.Warn("model list not kept in the state store", "provider", pr.Name, "error", err.Error())
		}
	}
}

// maxList bounds a list's body (OpenRouter's is a few hundred kB).
const maxList = 8 << 20

// list reads the provider's model list in its dialect's shape. An empty
// list is an error: a provider that "occasionally returns nothing" has
// not retired every model.
func (d *Discoverer) list(ctx context.Context, pr *config.Provider) ([]Model, error) {
	url := strings.TrimRight(pr.BaseURL, "/") + "/models"
	if pr.Dialect == config.DialectGemini {
		url += "?pageSize=1000"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range pr.Headers {
		req.Header.Set(k, v)
	}
	if pr.APIKey != "" {
		if pr.Dialect == config.DialectGemini {
			req.Header.Set("x-goog-api-key", pr.APIKey)
		} else {
			req.Header.Set("Authorization", "Bearer "+pr.APIKey)
		}
	}
	resp, err := d.o.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET /models: %s", failure.Redact(err.Error()))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("GET /models answered %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxList))
	if err != nil {
		return nil, fmt.Errorf("GET /models: reading the body: %w", err)
	}
	models, err := parse(pr.Dialect, body)
	if err != nil {
		return nil, err
	}
	if len(models) == 0 {
		return nil, errors.New("GET /models listed no model")
	}
	return models, nil
}

// parse reads an OpenAI-shaped list ({"data":[{"id",...}]}, with
// OpenRouter's pricing and context_length) or Gemini's models.list
// ({"models":[{"name":"models/ID"}]}).
func parse(dialect config.Dialect, body []byte) ([]Model, error) {
	if dialect == config.DialectGemini {
		var l struct {
			Models []struct {
				Name       string `json:"name"`
				InputLimit int    `json:"inputTokenLimit"`
			} `json:"models"`
		}
		if err := json.Unmarshal(body, &l); err != nil {
			return nil, fmt.Errorf("GET /models: not a models.list body: %w", err)
		}
		out := make([]Model, 0, len(l.Models))
		for _, m := range l.Models {
			if id := strings.TrimPrefix(m.Name, "models/"); id != "" {
				out = append(out, Model{ID: id, Context: m.InputLimit})
			}
		}
		return out, nil
	}
	var l struct {
		Data []struct {
			ID      string `json:"id"`
			Context int    `json:"context_length"`
			Pricing *struct {
				Prompt     string `json:"prompt"`
				Completion string `json:"completion"`
			} `json:"pricing"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &l); err != nil {
		return nil, fmt.Errorf("GET /models: not a model list: %w", err)
	}
	out := make([]Model, 0, len(l.Data))
	for _, m := range l.Data {
		if m.ID == "" {
			continue
		}
		free := m.Pricing != nil && zero(m.Pricing.Prompt) && zero(m.Pricing.Completion)
		out = append(out, Model{ID: m.ID, Free: free, Priced: m.Pricing != nil, Context: m.Context})
	}
	return out, nil
}

// zero reports whether a listed price is 0 ("0", "0.0").
func zero(s string) bool {
	f, err := strconv.ParseFloat(s, 64)
	return err == nil && f == 0
}

// FreeUnused returns the ids of the models the finding lists as free
// (OpenRouter: prompt and completion price 0) that no route of the plan at
// provider names, sorted: offered to the operator, never added silently.
func (f Finding) FreeUnused(p *config.Plan, provider string) []string {
	used := map[string]bool{}
	for _, r := range p.Routes {
		if r.Provider != nil && r.Provider.Name == provider {
			used[r.Model] = true
		}
	}
	var out []string
	for _, m := range f.Models {
		if m.Free && !used[m.ID] {
			out = append(out, m.ID)
		}
	}
	sort.Strings(out)
	return out
}
