package failure

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// detail is an error body boiled down to what Classify reads, whatever the
// envelope it came in (see doc.go, "Bodies"). The zero value is an empty or
// unparseable body.
type detail struct {
	message  string // the provider's reason
	code     string // a string code, or a numeric one that is not an HTTP status
	status   string // Google's status ("RESOURCE_EXHAUSTED")
	httpCode int    // a numeric code or status that is an HTTP status (OpenRouter, NVIDIA)
	typ      string // OpenAI-style type ("tokens", "too_many_requests_error")
	param    string // OpenAI-style param ("temperature"), when a string
	raw      string // OpenRouter metadata.raw: the upstream's own reason
	// limitSource is OpenRouter's metadata.limit_source.
	limitSource string
	quotaIDs    []string // Google QuotaFailure violations' quotaId and quotaMetric
	reasons     []string // Google ErrorInfo reasons ("API_KEY_INVALID")
	retryDelay  string   // Google RetryInfo.retryDelay ("26s")
	headers     http.Header
	// blockReason and finishReason come from a Gemini 200 refusal.
	blockReason  string
	finishReason string
	html         bool // the body was an HTML page
}

// parseBody parses b once. It never fails: what is not JSON is kept as text.
func parseBody(b []byte) detail {
	b = bytes.TrimSpace(b)
	var d detail
	if len(b) == 0 {
		return d
	}
	if b[0] == '{' || b[0] == '[' {
		var v any
		if json.Unmarshal(b, &v) == nil {
			if arr, ok := v.([]any); ok {
				// Gemini's OpenAI-compatible endpoint wraps the Google
				// error in an array.
				v = nil
				for _, el := range arr {
					if _, ok := el.(map[string]any); ok {
						v = el
						break
					}
				}
			}
			if obj, ok := v.(map[string]any); ok {
				d.fromObject(obj)
				return d
			}
			if s, ok := v.(string); ok {
				d.message = s
			}
			return d
		}
	}
	if b[0] == '<' {
		d.html = true
		d.message = htmlTitle(b)
		return d
	}
	d.message = string(b)
	return d
}

// fromObject reads every envelope: {"error":{...}} (OpenAI, Groq,
// OpenRouter, GitHub, Ollama, Google), {"error":"text"} (Pollinations),
// {"errors":[{...}]} (Cloudflare v4), and flat objects (Cerebras, Mistral,
// NVIDIA problem details, vLLM).
func (d *detail) fromObject(obj map[string]any) {
	inner := obj
	switch e := obj["error"].(type) {
	case map[string]any:
		inner = e
	case string:
		d.message = e
		inner = nil
	default:
		if errs, ok := obj["errors"].([]any); ok && len(errs) > 0 {
			if m, ok := errs[0].(map[string]any); ok {
				inner = m
			}
		}
	}
	if inner != nil {
		d.fromError(inner)
	}
	if d.httpCode == 0 {
		d.httpCode = httpStatus(obj["status"])
	}
	if d.message == "" {
		d.message = str(obj["message"])
	}
	// A Gemini 200 that refused the prompt.
	if pf, ok := obj["promptFeedback"].(map[string]any); ok {
		d.blockReason = str(pf["blockReason"])
	}
	if cs, ok := obj["candidates"].([]any); ok && len(cs) > 0 {
		if c, ok := cs[0].(map[string]any); ok {
			d.finishReason = str(c["finishReason"])
		}
	}
}

// fromError reads one error object.
func (d *detail) fromError(e map[string]any) {
	d.message = str(e["message"])
	if d.message == "" || strings.HasPrefix(d.message, `{"detail"`) {
		// Mistral's 422: pydantic's validation errors where the message
		// should be, as an object, an array or a JSON string.
		if m := validationText(e["message"], e["detail"]); m != "" {
			d.message = m
		}
	}
	if d.message == "" {
		// NVIDIA problem details: {"status","title","detail"}.
		title, det := str(e["title"]), str(e["detail"])
		switch {
		case title != "" && det != "":
			d.message = title + ": " + det
		case title != "":
			d.message = title
		default:
			d.message = det
		}
	}
	d.typ = str(e["type"])
	d.param = str(e["param"])
	switch c := e["code"].(type) {
	case string:
		d.code = c
	case float64:
		if n := httpStatus(c); n != 0 {
			d.httpCode = n
		} else {
			d.code = strconv.FormatFloat(c, 'f', -1, 64)
		}
	}
	switch s := e["status"].(type) {
	case string:
		d.status = s
	case float64:
		if d.httpCode == 0 {
			d.httpCode = httpStatus(s)
		}
	}
	if details, ok := e["details"].([]any); ok {
		for _, x := range details {
			if m, ok := x.(map[string]any); ok {
				d.fromGoogleDetail(m)
			}
		}
	}
	if md, ok := e["metadata"].(map[string]any); ok {
		d.raw = str(md["raw"])
		if d.raw == "" && md["raw"] != nil {
			if b, err := json.Marshal(md["raw"]); err == nil {
				d.raw = string(b)
			}
		}
		d.limitSource = str(md["limit_source"])
		if hs, ok := md["headers"].(map[string]any); ok {
			d.headers = make(http.Header, len(hs))
			for k, v := range hs {
				if s := str(v); s != "" {
					d.headers.Set(k, s)
				}
			}
		}
	}
}

// fromGoogleDetail reads one google.rpc detail: QuotaFailure, RetryInfo,
// ErrorInfo.
func (d *detail) fromGoogleDetail(m map[string]any) {
	if r := str(m["reason"]); r != "" {
		d.reasons = append(d.reasons, r)
	}
	if rd := str(m["retryDelay"]); rd != "" {
		d.retryDelay = rd
	}
	vs, _ := m["violations"].([]any)
	for _, x := range vs {
		v, ok := x.(map[string]any)
		if !ok {
			continue
		}
		for _, k := range []string{"quotaId", "quotaMetric"} {
			if s := str(v[k]); s != "" {
				d.quotaIDs = append(d.quotaIDs, s)
			}
		}
	}
}

// validationText turns pydantic validation errors (Mistral's 422) into one
// line: "Extra inputs are not permitted: body.frequency_penalty", at most
// three of them. They come as {"detail":[{"type","loc","msg"}]} in the
// message (an object, or that object as a JSON string), as an array in the
// message, or as a top-level "detail" array (docs/PROVIDERS.md has none of
// these; bodies quoted in github.com/crewAIInc/crewAI/issues/60 [2024-04],
// github.com/mistralai/platform-docs-public/issues/7 [2024-01],
// github.com/partITech/php-mistral/issues/76 [2025-11]).
func validationText(message, detailField any) string {
	var list []any
	switch m := message.(type) {
	case map[string]any:
		list, _ = m["detail"].([]any)
	case []any:
		list = m
	case string:
		var inner struct {
			Detail []any `json:"detail"`
		}
		if json.Unmarshal([]byte(m), &inner) == nil {
			list = inner.Detail
		}
	}
	if list == nil {
		list, _ = detailField.([]any)
	}
	var parts []string
	for _, x := range list {
		e, ok := x.(map[string]any)
		if !ok || len(parts) == 3 {
			continue
		}
		msg := str(e["msg"])
		if msg == "" {
			continue
		}
		var loc []string
		locs, _ := e["loc"].([]any)
		for _, l := range locs {
			switch v := l.(type) {
			case string:
				loc = append(loc, v)
			case float64:
				loc = append(loc, strconv.FormatFloat(v, 'f', -1, 64))
			}
		}
		if len(loc) > 0 {
			msg += ": " + strings.Join(loc, ".")
		}
		parts = append(parts, msg)
	}
	return strings.Join(parts, "; ")
}

// reason is the text to show: OpenRouter's "Provider returned error" is
// replaced by the upstream's own words in metadata.raw.
func (d *detail) reason() string {
	if d.raw != "" && (d.message == "" || strings.EqualFold(strings.TrimSpace(d.message), "Provider returned error")) {
		return d.raw
	}
	return d.message
}

// haystack is every text field, lower-cased, for the message rules.
func (d *detail) haystack() string {
	parts := []string{d.message, d.raw, d.code, d.status, d.typ, d.limitSource, d.blockReason}
	parts = append(parts, d.quotaIDs...)
	parts = append(parts, d.reasons...)
	return strings.ToLower(strings.Join(parts, "\n"))
}

// str returns v if it is a string.
func str(v any) string {
	s, _ := v.(string)
	return s
}

// httpStatus returns v as an HTTP status, or 0 when it is not a number in
// 100..599.
func httpStatus(v any) int {
	f, ok := v.(float64)
	if !ok || f < 100 || f > 599 || f != math.Trunc(f) {
		return 0
	}
	return int(f)
}

// htmlTitle returns the text of an HTML page's <title>, or "".
func htmlTitle(b []byte) string {
	lower := bytes.ToLower(b)
	i := bytes.Index(lower, []byte("<title"))
	if i < 0 {
		return ""
	}
	j := bytes.IndexByte(lower[i:], '>')
	if j < 0 {
		return ""
	}
	start := i + j + 1
	end := bytes.Index(lower[start:], []byte("</title"))
	if end < 0 {
		return ""
	}
	return string(b[start : start+end])
}
