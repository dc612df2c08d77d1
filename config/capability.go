package config

import (
	"strings"
	"time"
)

// Capabilities per model (issue 33). A request that carries function tools,
// an image or audio can only be answered by a model that takes them; a
// route that cannot is skipped for that request, with the reason, and
// never rested for it (route.Router). Each preset model says what it takes,
// with a cited source (PresetModel.CapsSource); a model of the config file
// may say so too (tools:, vision:, audio:), and a model nobody describes is
// Unknown: it is tried, and a refusal is learned.

// Capability says whether a model takes one kind of content.
type Capability uint8

// The values of a Capability.
const (
	// CapUnknown: nothing says; the route is tried, and if it refuses the
	// content, that is learned for a week (route's learned traits).
	CapUnknown Capability = iota
	// CapYes: the model takes it (its provider documents so).
	CapYes
	// CapNo: the model does not take it; a request that carries it skips
	// the route.
	CapNo
)

// String returns "yes", "no" or "unknown".
func (c Capability) String() string {
	switch c {
	case CapYes:
		return "yes"
	case CapNo:
		return "no"
	}
	return "unknown"
}

// capOf turns a config file's boolean into a Capability; nil is unknown.
func capOf(b *bool) Capability {
	switch {
	case b == nil:
		return CapUnknown
	case *b:
		return CapYes
	}
	return CapNo
}

// Capabilities are what a chat model takes besides text. Its context size
// is Route.MaxContext and its typed answers Route.Schema.
type Capabilities struct {
	// Tools: function tools (OpenAI's tools and tool_choice, and the
	// tool_calls and tool messages of a tool loop).
	Tools Capability
	// Vision: images in a message (image_url or input_image parts).
	Vision Capability
	// Audio: audio in a message (input_audio parts).
	Audio Capability
}

// String lists the capabilities as `tollfree check` shows them:
// "tools vision -audio", a leading "-" for what the model does not take,
// "?" for what nothing says ("tools? vision? audio?").
func (c Capabilities) String() string {
	var b strings.Builder
	for i, f := range []struct {
		name string
		c    Capability
	}{{"tools", c.Tools}, {"vision", c.Vision}, {"audio", c.Audio}} {
		if i > 0 {
			b.WriteByte(' ')
		}
		switch f.c {
		case CapYes:
			b.WriteString(f.name)
		case CapNo:
			b.WriteString("-" + f.name)
		default:
			b.WriteString(f.name + "?")
		}
	}
	return b.String()
}

// Media says whether and how the gateway may fetch an image or audio file
// that a request gives by http(s) URL, for a route that takes media only
// inline (Gemini's native API takes inlineData, not URLs). By default it
// fetches nothing: no server-side request goes to an address a caller
// chose (docs/DESIGN.md, "What is never done"), and such a request skips
// those routes for that request, with the reason.
type Media struct {
	// FetchHosts are the hosts (exact names, or ".example.com" for every
	// subdomain of example.com) whose https URLs may be fetched. Empty:
	// none.
	FetchHosts []string
	// MaxBytes caps one fetched file. Default 5 MiB.
	MaxBytes int64
	// Timeout caps one fetch. Default 5s.
	Timeout time.Duration
}

// Allows reports whether host (a URL's host, without a port) is one of
// the hosts media may be fetched from.
func (m Media) Allows(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "" {
		return false
	}
	for _, h := range m.FetchHosts {
		h = strings.ToLower(h)
		switch {
		case strings.HasPrefix(h, "."):
			if strings.HasSuffix(host, h) {
				return true
			}
		case host == h:
			return true
		}
	}
	return false
}
