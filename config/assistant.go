package config

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// defaultAssistantCacheTTL is how long an assistant chain keeps an answer
// unless cache_ttl says otherwise (seed 000: "A first question's answer is
// cached for a week").
const defaultAssistantCacheTTL = 168 * time.Hour

// defaultAssistantHistory is how many exchanges go with a follow-up (seed
// 000: "Only the last two exchanges go with a follow-up").
const defaultAssistantHistory = 2

// DefaultResting returns the sentence above a search answer, by language,
// used when the assistant's resting: block does not give one (issue 14).
func DefaultResting() map[string]string {
	return map[string]string{
		"en": "The assistant is resting right now; these pages may help:",
		"fr": "L'assistant se repose pour le moment ; ces pages peuvent vous aider :",
		"de": "Der Assistent ruht gerade; diese Seiten können helfen:",
		"es": "El asistente está descansando ahora mismo; estas páginas pueden ayudar:",
	}
}

func assistantDefaults(a *AssistantConfig) {
	if a == nil {
		return
	}
	setInt(&a.History, defaultAssistantHistory)
	if len(a.Origins) == 0 && a.BaseURL != "" {
		if u, err := url.Parse(a.BaseURL); err == nil && u.Scheme != "" && u.Host != "" {
			a.Origins = []string{u.Scheme + "://" + u.Host}
		}
	}
}

// validateAssistant checks a chain's assistant: block (path names it, for
// the problems report).
func (l *loader) validateAssistant(path string, a *AssistantConfig, report func(sub, format string, args ...any)) {
	if a == nil {
		return
	}
	if strings.TrimSpace(a.Content) == "" {
		report("assistant.content", "an assistant needs its content: a folder of .md, .html or .txt pages (write, say, content: ./content)")
	}
	if a.BaseURL != "" {
		if u, err := url.Parse(a.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			report("assistant.base_url", "%s is not an http(s) URL (write, say, https://example.com/)", l.dec.quote(path+".base_url", a.BaseURL))
		}
	}
	for i, o := range a.Origins {
		if u, err := url.Parse(o); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || o == "*" {
			report(fmt.Sprintf("assistant.origins[%d]", i), "%s is not an origin (write, say, https://example.com; * is not allowed)", l.dec.quote(fmt.Sprintf("%s.origins[%d]", path, i), o))
		}
	}
	if *a.History < 0 {
		report("assistant.history", "%d is negative; 0 sends no history", *a.History)
	}
	for i, r := range a.Rules {
		sub := fmt.Sprintf("assistant.rules[%d]", i)
		switch {
		case len(r.Match) > 0 && r.Pattern != "":
			report(sub, "give match or pattern, not both")
		case len(r.Match) == 0 && r.Pattern == "":
			report(sub, `a rule needs match: [...] or pattern: "..."`)
		case r.Pattern != "":
			if _, err := regexp.Compile(r.Pattern); err != nil {
				report(sub+".pattern", "%s is not a valid regexp: %v", l.dec.quote(fmt.Sprintf("%s.rules[%d].pattern", path, i), r.Pattern), err)
			}
		}
		if strings.TrimSpace(r.Answer) == "" {
			report(sub+".answer", "a rule needs the answer it gives")
		}
	}
	for lang, text := range a.Resting {
		if lang == "" || strings.TrimSpace(text) == "" {
			report("assistant.resting", "each language needs a sentence (write, say, en: \"The assistant is resting; these pages may help:\")")
		}
	}
}

// compileAssistant turns a validated assistant: block into its plan.
func compileAssistant(a *AssistantConfig) *Assistant {
	if a == nil {
		return nil
	}
	out := &Assistant{
		Content: a.Content, BaseURL: a.BaseURL, Origins: a.Origins, Prompt: a.Prompt,
		History: *a.History, Resting: make(map[string]string, 4+len(a.Resting)),
	}
	out.Contact = a.Contact
	if a.Contact != "" && !strings.Contains(a.Contact, "://") && a.BaseURL != "" {
		if b, err := url.Parse(a.BaseURL); err == nil {
			if ref, err := url.Parse(a.Contact); err == nil {
				out.Contact = b.ResolveReference(ref).String()
			}
		}
	}
	for k, v := range DefaultResting() {
		out.Resting[k] = v
	}
	for k, v := range a.Resting {
		out.Resting[strings.ToLower(k)] = v
	}
	for _, r := range a.Rules {
		rule := AssistantRule{Match: r.Match, Answer: r.Answer}
		if r.Pattern != "" {
			rule.Pattern = regexp.MustCompile(r.Pattern) // validated
		}
		out.Rules = append(out.Rules, rule)
	}
	return out
}
