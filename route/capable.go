package route

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/rest"
)

// Routes chosen by what they can do (issue 33). A request that carries
// function tools, an image or audio needs a model that takes them
// (config.Route.Caps), and an adapter that can carry every part and field
// of it (Gemini's native API has no place for an image by URL it may not
// fetch, nor for a field of OpenAI's it has no counterpart for: an Upstream
// with Uncarried says so). A route that cannot is skipped for the request,
// with the reason, and never rested for it; when no route of the chain
// can, the caller gets a 400 naming what is missing and the routes that
// lack it (*CapabilityError). A route that refuses content its model was
// thought to take is learned not to take it (rest.NoTools, NoVision,
// NoAudio), for every instance and a week, as a route that refuses a
// prefix continuation is.

// carrier is an Upstream whose dialect cannot send every request as it
// is: Uncarried names what it cannot carry, "" when it can carry it all.
type carrier interface {
	Uncarried(req *llm.Request) string
}

// capability is what a walk knows of its request's needs. The walk's
// goroutine owns it.
type capability struct {
	needs  llm.Needs
	read   bool
	lacks  map[*config.Route]string // routes skipped for what they cannot take, and why
	missed llm.Needs                // the needs some route lacked
	// carried holds each provider's Uncarried answer for the request.
	carried map[string]string
}

// The needs a model's capabilities answer, with their names and traits.
var capNeeds = [...]struct {
	need  llm.Needs
	name  string
	trait string
	cap   func(config.Capabilities) config.Capability
	// refusal is how a provider's refusal of it reads.
	refusal *regexp.Regexp
}{
	{llm.NeedTools, "tools", rest.NoTools, func(c config.Capabilities) config.Capability { return c.Tools },
		regexp.MustCompile(`(?i)\btools?\b|tool[ _-]?(?:use|call|choice)|function[ _-]?call`)},
	{llm.NeedVision, "vision (images)", rest.NoVision, func(c config.Capabilities) config.Capability { return c.Vision },
		regexp.MustCompile(`(?i)image|vision|multi-?modal`)},
	{llm.NeedAudio, "audio", rest.NoAudio, func(c config.Capabilities) config.Capability { return c.Audio },
		regexp.MustCompile(`(?i)audio`)},
}

// needs reads, once, what the walk's request needs.
func (w *walk) needs() llm.Needs {
	if !w.capab.read {
		w.capab.needs, w.capab.read = w.req.Needs(), true
	}
	return w.capab.needs
}

// canCarry reports whether rt can take the walk's request: its model takes
// what the request needs (and has not refused it lately), and its adapter
// can carry every part and field of it.
func (w *walk) canCarry(rt *config.Route) (Skip, bool) {
	needs := w.needs()
	if rt.Disabled || needs == 0 && len(w.req.Extra) == 0 {
		return Skip{}, true
	}
	now := w.r.clock.Now()
	for _, n := range capNeeds {
		if !needs.Has(n.need) {
			continue
		}
		why := ""
		switch {
		case n.cap(rt.Caps) == config.CapNo:
			why = "lacks " + n.name
		case w.rests.Knows(rest.TraitKey(n.trait, rt.ID), now):
			why = "lacks " + n.name + " (it refused them lately)"
		}
		if why != "" {
			w.lacking(rt, n.need, why)
			return Skip{Route: rt.ID, Reason: why}, false
		}
	}
	if why := w.uncarried(rt); why != "" {
		why = "cannot carry " + why
		w.lacking(rt, 0, why)
		return Skip{Route: rt.ID, Reason: why}, false
	}
	return Skip{}, true
}

// uncarried asks rt's adapter what of the request it cannot carry, once
// per provider and request.
func (w *walk) uncarried(rt *config.Route) string {
	name := rt.Provider.Name
	if why, ok := w.capab.carried[name]; ok {
		return why
	}
	why := ""
	if c, ok := w.r.ups[name].(carrier); ok {
		why = c.Uncarried(w.req)
	}
	if w.capab.carried == nil {
		w.capab.carried = map[string]string{}
	}
	w.capab.carried[name] = why
	return why
}

// lacking notes that rt cannot take the request, and why.
func (w *walk) lacking(rt *config.Route, need llm.Needs, why string) {
	if w.capab.lacks == nil {
		w.capab.lacks = map[*config.Route]string{}
	}
	if _, seen := w.capab.lacks[rt]; !seen {
		w.capab.lacks[rt] = why
	}
	w.capab.missed |= need
}

// refusedContent settles an attempt that failed because its route could
// not take what the request carries: an adapter that could not carry it
// (failure.ErrCannotCarry: media it could not fetch), or a provider's
// refusal (too_large or unsupported) that names tools, images or audio
// the request has. It notes the route as lacking it, learns the refusal
// when the route's model was thought to take it, and reports true; false
// for any other failure.
func (w *walk) refusedContent(o *outcome, v failure.Verdict) bool {
	rt := o.route
	if errors.Is(o.err, failure.ErrCannotCarry) {
		w.lacking(rt, 0, "cannot carry "+strings.TrimPrefix(v.Message, failure.ErrCannotCarry.Error()+": "))
		return true
	}
	if v.Class != failure.TooLarge && v.Class != failure.Unsupported {
		return false
	}
	needs := w.needs()
	for _, n := range capNeeds {
		if !needs.Has(n.need) || !n.refusal.MatchString(v.Message) || n.need == llm.NeedTools && v.Class == failure.Unsupported && !toolsRefused(v) {
			continue
		}
		w.lacking(rt, n.need, "refused "+n.name)
		if n.cap(rt.Caps) != config.CapNo {
			now := w.r.clock.Now()
			r, err := rest.Learn(w.background(), w.r.store, rest.TraitKey(n.trait, rt.ID), v.Class, now, now.Add(rest.TraitTTL), v.LogText())
			if err != nil {
				w.r.log.Warn("state store: recording that a route refuses content failed", "route", rt.ID, "err", err)
			}
			w.rests.Put(r)
			w.r.log.Info("route refused content its model was thought to take: skipped for such requests", "route", rt.ID, "lacks", n.name, "until", r.Until)
		}
		return true
	}
	return false
}

// toolsRefused reports whether an unsupported-field verdict is about the
// tools themselves, not one field of theirs the route does not take (a
// "strict" flag, a "tool_choice" value): only a refusal of tools as such
// teaches that the route takes none.
func toolsRefused(v failure.Verdict) bool {
	leaf := leafName(v.Param)
	return leaf == "" || leaf == "tools"
}

// capabilityError is the error of a walk whose every route that could be
// called was skipped, or refused, for what the request carries (or for
// being too large, or a field of it): a *CapabilityError, or nil when
// some route could take it (and was resting, spent or failing: that is
// no fault of the request).
func (w *walk) capabilityError() error {
	n := len(w.capab.lacks)
	if n == 0 {
		return nil
	}
	unable := 0
	if w.typed != nil {
		unable = len(w.typed.unable)
	}
	if n+w.tooLarge+w.unsup.n+unable < len(w.order)-w.countDisabled() {
		return nil
	}
	e := &CapabilityError{Chain: w.ch.Name}
	for _, c := range capNeeds {
		if w.capab.missed.Has(c.need) {
			e.Missing = append(e.Missing, c.name)
		}
	}
	for _, rt := range w.order {
		if why, ok := w.capab.lacks[rt]; ok {
			e.Routes = append(e.Routes, Skip{Route: rt.ID, Reason: why})
		}
	}
	return e
}

// CapabilityError says that no route of a chain can take a request for
// what it carries (issue 33): tools, images or audio its models do not
// take, or a part or field their dialect cannot carry. The caller gets a
// 400 naming what is missing and the routes that lack it.
type CapabilityError struct {
	Chain string
	// Missing names the capabilities no route had ("tools", "vision
	// (images)", "audio"); empty when the routes lacked a way to carry a
	// part or field rather than a capability.
	Missing []string
	// Routes are the routes that could not take it, and why.
	Routes []Skip
}

// Status is the HTTP status a caller gets: 400.
func (e *CapabilityError) Status() int { return http.StatusBadRequest }

// Param names the request's parameter at fault: tools, or messages.
func (e *CapabilityError) Param() string {
	if len(e.Missing) == 1 && e.Missing[0] == "tools" {
		return "tools"
	}
	return "messages"
}

func (e *CapabilityError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "no route of chain %q can take this request", e.Chain)
	if len(e.Missing) > 0 {
		b.WriteString(": it needs " + strings.Join(e.Missing, " and "))
	}
	for i, s := range e.Routes {
		if i == 0 {
			b.WriteString("; ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(s.Route + " " + s.Reason)
	}
	return b.String()
}
