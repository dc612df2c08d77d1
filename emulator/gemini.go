package emulator

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// gemContent is one turn (or the system instruction) of a Gemini request.
type gemContent struct {
	Role  string    `json:"role"`
	Parts []gemPart `json:"parts"`
}

// gemPart is one part of a turn: text, inlineData, functionCall or
// functionResponse.
type gemPart struct {
	Text       string `json:"text"`
	InlineData *struct {
		MimeType string `json:"mimeType"`
		Data     string `json:"data"`
	} `json:"inlineData"`
	FunctionCall *struct {
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
	ThoughtSignature string `json:"thoughtSignature"`
}

func (g gemContent) text() string {
	var b strings.Builder
	for _, p := range g.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// gemTools are a request's tools: function declarations (parameters as
// JSON Schema, or as the older OpenAPI subset).
type gemTools []struct {
	FunctionDeclarations []struct {
		Name                 string          `json:"name"`
		ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
		Parameters           json.RawMessage `json:"parameters"`
	} `json:"functionDeclarations"`
}

// gemAsk reads what a generateContent request asks beyond text.
func gemAsk(req gemRequest) asked {
	var a asked
	for _, t := range req.Tools {
		for _, d := range t.FunctionDeclarations {
			p := d.ParametersJSONSchema
			if len(p) == 0 {
				p = d.Parameters
			}
			a.tools = append(a.tools, toolDecl{name: d.Name, params: decodeAny(p)})
		}
	}
	if tc := req.ToolConfig; tc != nil {
		switch fc := tc.FunctionCallingConfig; fc.Mode {
		case "NONE":
			a.choice = "none"
		case "ANY":
			a.choice = "required"
			if len(fc.AllowedFunctionNames) == 1 {
				a.choice = fc.AllowedFunctionNames[0]
			}
		default:
			a.choice = "auto"
		}
	}
	if gc := req.GenerationConfig; gc != nil {
		switch {
		case len(gc.ResponseJSONSchema) > 0:
			a.schema = decodeAny(gc.ResponseJSONSchema)
		case gc.ResponseMimeType == "application/json":
			a.jsonObject = true
		}
	}
	for i, ct := range req.Contents {
		for j, p := range ct.Parts {
			switch {
			case p.InlineData != nil && strings.HasPrefix(p.InlineData.MimeType, "image/"):
				a.images = append(a.images, describeBlob(p.InlineData.MimeType, p.InlineData.Data))
			case p.InlineData != nil && strings.HasPrefix(p.InlineData.MimeType, "audio/"):
				a.audio++
			case p.FunctionResponse != nil && i == len(req.Contents)-1 && j == len(ct.Parts)-1:
				a.afterTool, a.toolResult = true, string(p.FunctionResponse.Response)
			}
		}
	}
	return a
}

// gemPartsProblem is Gemini's 400 for parts it refuses: a functionResponse
// whose response is not an object, inlineData without a type or with bad
// base64, and (on Gemini 3) a replayed functionCall without a thought
// signature.
func gemPartsProblem(req gemRequest, modelID string) string {
	for i, ct := range req.Contents {
		signed := false
		for j, p := range ct.Parts {
			at := fmt.Sprintf("contents[%d].parts[%d]", i, j)
			switch {
			case p.FunctionResponse != nil:
				r := strings.TrimSpace(string(p.FunctionResponse.Response))
				if !strings.HasPrefix(r, "{") {
					return "Invalid value at '" + at + ".function_response.response' (type.googleapis.com/google.protobuf.Struct), " + r
				}
				if p.FunctionResponse.Name == "" {
					return "* GenerateContentRequest." + at + ".function_response.name: Name cannot be empty.\n"
				}
			case p.InlineData != nil:
				if p.InlineData.MimeType == "" {
					return "* GenerateContentRequest." + at + ".inline_data.mime_type: mime_type is not specified\n"
				}
				if _, err := base64.StdEncoding.DecodeString(p.InlineData.Data); err != nil {
					return "Invalid value at '" + at + ".inline_data.data' (TYPE_BYTES), Base64 decoding failed"
				}
			case p.FunctionCall != nil:
				if p.ThoughtSignature != "" {
					signed = true
				}
				// Gemini 3 checks the first call of a step for its
				// signature (https://ai.google.dev/gemini-api/docs/thought-signatures;
				// the words as github.com/erain/glue's v1.8.0 quotes them).
				if strings.Contains(modelID, "gemini-3") && !signed {
					return "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance."
				}
			}
		}
	}
	for _, t := range req.Tools {
		for k, d := range t.FunctionDeclarations {
			if !gemFunctionName(d.Name) {
				return fmt.Sprintf("* GenerateContentRequest.tools[0].function_declarations[%d].name: Invalid function name. Must start with a letter or an underscore. Must be a-z, A-Z, 0-9, or contain underscores, dots, colons and dashes, with a maximum length of 64.\n", k)
			}
			if len(d.ParametersJSONSchema) > 0 && len(d.Parameters) > 0 {
				return fmt.Sprintf("* GenerateContentRequest.tools[0].function_declarations[%d]: parameters and parameters_json_schema are mutually exclusive.\n", k)
			}
		}
	}
	return ""
}

func gemFunctionName(n string) bool {
	if n == "" || len(n) > 64 || !(n[0] == '_' || n[0] >= 'a' && n[0] <= 'z' || n[0] >= 'A' && n[0] <= 'Z') {
		return false
	}
	for _, r := range n {
		if !(r == '_' || r == '.' || r == ':' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// gemRequest is the part of a generateContent request the emulator reads,
// after snake_case keys were turned into camelCase (Google accepts both).
type gemRequest struct {
	Contents          []gemContent `json:"contents"`
	SystemInstruction *gemContent  `json:"systemInstruction"`
	Tools             gemTools     `json:"tools"`
	ToolConfig        *struct {
		FunctionCallingConfig struct {
			Mode                 string   `json:"mode"`
			AllowedFunctionNames []string `json:"allowedFunctionNames"`
		} `json:"functionCallingConfig"`
	} `json:"toolConfig"`
	GenerationConfig *struct {
		ResponseMimeType   string          `json:"responseMimeType"`
		ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
		MaxOutputTokens    int             `json:"maxOutputTokens"`
		ThinkingConfig     *struct {
			ThinkingBudget *int   `json:"thinkingBudget"`
			ThinkingLevel  string `json:"thinkingLevel"`
		} `json:"thinkingConfig"`
	} `json:"generationConfig"`
}

// The fields generateContent accepts at each level checked; any other is a
// 400 (docs/PROVIDERS.md: "Unknown name ... Cannot find field").
func gemTopField(n string) bool {
	switch n {
	case "contents", "systemInstruction", "generationConfig", "safetySettings",
		"tools", "toolConfig", "cachedContent", "labels", "model", "serviceTier":
		return true
	}
	return false
}

func gemConfigField(n string) bool {
	switch n {
	case "stopSequences", "responseMimeType", "responseSchema", "responseJsonSchema",
		"responseModalities", "candidateCount", "maxOutputTokens", "temperature", "topP", "topK", "seed",
		"presencePenalty", "frequencyPenalty", "responseLogprobs", "logprobs", "enableEnhancedCivicAnswers",
		"speechConfig", "thinkingConfig", "mediaResolution", "imageConfig":
		return true
	}
	return false
}

func gemThinkingField(n string) bool {
	return n == "thinkingBudget" || n == "thinkingLevel" || n == "includeThoughts"
}

// camel turns a proto field name into its JSON name: thinking_config →
// thinkingConfig.
func camel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// normalize checks the keys of one object level against allowed and
// renames them to camelCase. It returns Google's message for the first
// unknown key (in sorted order, for determinism).
func normalize(m map[string]any, allowed func(string) bool, at string) (map[string]any, string) {
	out := make(map[string]any, len(m))
	var bad []string
	for k, v := range m {
		ck := camel(k)
		if !allowed(ck) {
			bad = append(bad, k)
			continue
		}
		out[ck] = v
	}
	if len(bad) == 0 {
		return out, ""
	}
	first := bad[0]
	for _, b := range bad {
		first = min(first, b)
	}
	if at == "" {
		return nil, `Invalid JSON payload received. Unknown name "` + first + `": Cannot find field.`
	}
	return nil, `Invalid JSON payload received. Unknown name "` + first + `" at '` + at + `': Cannot find field.`
}

// parseGemini decodes and checks a generateContent body. problem is the
// INVALID_ARGUMENT message for a bad body, field the violation's field.
func parseGemini(body []byte) (req gemRequest, problem, field string) {
	var top map[string]any
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		return req, "Invalid JSON payload received. Unexpected token.", ""
	}
	top, problem = normalize(top, gemTopField, "")
	if problem != "" {
		return req, problem, ""
	}
	if gc, ok := top["generationConfig"].(map[string]any); ok {
		gc, problem = normalize(gc, gemConfigField, "generation_config")
		if problem != "" {
			return req, problem, "generation_config"
		}
		if tc, ok := gc["thinkingConfig"].(map[string]any); ok {
			gc["thinkingConfig"], problem = normalize(tc, gemThinkingField, "generation_config.thinking_config")
			if problem != "" {
				return req, problem, "generation_config.thinking_config"
			}
		}
		top["generationConfig"] = gc
	}
	clean, _ := json.Marshal(top)
	if err := json.Unmarshal(clean, &req); err != nil {
		return req, "Invalid JSON payload received. Unexpected token.", ""
	}
	if len(req.Contents) == 0 {
		return req, "* GenerateContentRequest.contents: contents is not specified\n", ""
	}
	for _, c := range req.Contents {
		if c.Role != "" && c.Role != "user" && c.Role != "model" {
			return req, "Please use a valid role: user, model.", ""
		}
	}
	return req, "", ""
}

// refusedGeminiField finds a top-level or generationConfig field of body
// that the model refuses (Model.Unsupported), with its value.
func (e *Emulator) refusedGeminiField(providerName, modelID string, body []byte) (string, json.RawMessage, bool) {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return "", nil, false
	}
	fields := map[string]json.RawMessage{}
	for k, v := range top {
		fields[k] = v
		if camel(k) == "generationConfig" {
			var gc map[string]json.RawMessage
			if json.Unmarshal(v, &gc) == nil {
				for gk, gv := range gc {
					fields[gk] = gv
				}
			}
		}
	}
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	name, ok := e.refusedField(providerName, modelID, names)
	return name, fields[name], ok
}

// thinkingProblem is the 400 a model gives to a thinking config it refuses.
func thinkingProblem(req gemRequest, modelID string) string {
	if req.GenerationConfig == nil || req.GenerationConfig.ThinkingConfig == nil {
		return ""
	}
	tc := req.GenerationConfig.ThinkingConfig
	switch {
	case tc.ThinkingLevel != "" && tc.ThinkingBudget != nil:
		return "You can only set only one of thinking budget and thinking level."
	case tc.ThinkingLevel != "" && strings.Contains(modelID, "2.5"):
		return "Thinking level is not supported for this model."
	}
	return ""
}

func googleKey(r *http.Request) string {
	if k := r.Header.Get("x-goog-api-key"); k != "" {
		return k
	}
	return r.URL.Query().Get("key")
}

func gErr(status int, msg, st string, details ...any) failure {
	e := obj{{"code", status}, {"message", msg}, {"status", st}}
	if len(details) > 0 {
		e = append(e, kv{"details", details})
	}
	return failure{status: status, body: pretty(obj{{"error", e}}), google: true}
}

func (e *Emulator) serveGemini(w http.ResponseWriter, r *http.Request, p Provider, path string) {
	if rest, ok := strings.CutPrefix(path, "/openai/"); ok {
		// Google's OpenAI-compatible endpoint on the same account.
		e.serveOpenAI(w, r, p, "/"+rest)
		return
	}
	c := &call{prov: p, gotKey: googleKey(r), fieldAt: -1}
	if path == "/models" && r.Method == http.MethodGet {
		if p.Key != "" && googleKey(r) != p.Key {
			c.kind = Unauthorized
			e.writeFailure(w, e.failureOf(c))
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.Write(pretty(e.geminiModels(p)))
		return
	}
	rest, ok := strings.CutPrefix(path, "/models/")
	i := strings.LastIndexByte(rest, ':')
	if !ok || i < 0 || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	method := rest[i+1:]
	c.modelID = rest[:i]
	switch method {
	case "generateContent":
	case "streamGenerateContent":
		c.stream = true
	case "embedContent", "batchEmbedContents":
		e.serveGeminiEmbed(w, r, c, method == "batchEmbedContents")
		return
	default:
		http.NotFound(w, r)
		return
	}

	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	req, problem, field := parseGemini(body)
	c.format = geminiBodyFormat(body)
	c.ask = gemAsk(req)
	if problem == "" {
		problem = gemPartsProblem(req, c.modelID)
	}
	e.sawBody(p.Name, c.modelID, body)
	if problem == "" && badText(body) {
		problem = "Invalid JSON payload received. Invalid UTF-8 or unpaired surrogate."
	}
	if err != nil {
		problem = "Invalid JSON payload received. Unexpected token."
	}
	n := 0
	if req.SystemInstruction != nil {
		n += len(req.SystemInstruction.text())
		c.turns = append(c.turns, Turn{Role: "system", Text: req.SystemInstruction.text()})
	}
	last := len(req.Contents) - 1
	for i, ct := range req.Contents {
		t := ct.text()
		n += len(t)
		role := "user"
		if ct.Role == "model" {
			role = "assistant"
		}
		c.turns = append(c.turns, Turn{Role: role, Text: t})
		switch {
		case i == last && ct.Role == "model":
			c.prefix, c.hasPrefix = t, true
		case i == last-1 && ct.Role == "model" && req.Contents[last].Role != "model":
			c.partial, c.hasPartial = t, t != ""
		}
	}
	c.prompt = tokensOf(n)
	if req.GenerationConfig != nil {
		c.maxTokens = req.GenerationConfig.MaxOutputTokens
	}

	if p.Key != "" && googleKey(r) != p.Key {
		c.kind = Unauthorized
		f := e.failureOf(c)
		e.record(c, "auth", f.status)
		e.writeFailure(w, f)
		return
	}
	if problem == "" {
		if name, value, ok := e.refusedGeminiField(p.Name, c.modelID, body); ok {
			f := unsupportedFailure(c, name, value)
			e.record(c, "unsupported", f.status)
			e.writeFailure(w, f)
			return
		}
		if m, ok := e.modelOf(p.Name, c.modelID); ok {
			if f, refused := formatRefusal(c, m, c.format, true); refused {
				e.record(c, "unsupported", f.status)
				e.writeFailure(w, f)
				return
			}
			if f, refused := mediaRefusal(c, m); refused {
				e.record(c, "unsupported", f.status)
				e.writeFailure(w, f)
				return
			}
		}
		problem = thinkingProblem(req, c.modelID)
	}
	if f, behaviour, ok := e.prefillProblem(c); ok && problem == "" {
		e.record(c, behaviour, f.status)
		e.writeFailure(w, f)
		return
	}
	if problem != "" {
		var f failure
		if strings.HasPrefix(problem, "Invalid JSON payload") {
			fv := obj{{"description", problem}}
			if field != "" {
				fv = obj{{"field", field}, {"description", problem}}
			}
			f = gErr(400, problem, "INVALID_ARGUMENT", obj{{"@type", "type.googleapis.com/google.rpc.BadRequest"}, {"fieldViolations", []obj{fv}}})
		} else {
			f = gErr(400, problem, "INVALID_ARGUMENT")
		}
		e.record(c, "invalid", f.status)
		e.writeFailure(w, f)
		return
	}
	e.admit(c)
	e.finishRecord(c, e.runGemini(w, r, c))
}

func (e *Emulator) runGemini(w http.ResponseWriter, r *http.Request, c *call) int {
	ctx := r.Context()
	if c.kind == Hang {
		e.hang(ctx, c)
		return 0
	}
	if !e.latency(ctx, c) {
		return 0
	}
	if status, ok := e.runChaos(w, c, func() int { return e.answerGemini(w, r, c) }); ok {
		return status
	}
	switch {
	case c.kind == Malformed:
		return writeMalformed(w)
	case c.kind == Refused:
		return e.answerGemini(w, r, c)
	case c.kind == StreamErrorEvent && !c.stream:
		f := gErr(500, "Internal error encountered.", "INTERNAL")
		e.writeFailure(w, f)
		return f.status
	case c.kind.answers():
		return e.answerGemini(w, r, c)
	}
	f := e.failureOf(c)
	e.writeFailure(w, f)
	return f.status
}

func (c *call) responseID() string { return fmt.Sprintf("emu%020d", c.seq) }

// gemEvent is a GenerateContentResponse carrying text, with cumulative
// usage; finish marks the last one.
func (c *call) gemEvent(text string, finish bool, soFar int) obj {
	content := obj{{"role", "model"}}
	var parts []obj
	if text != "" {
		parts = append(parts, obj{{"text", text}})
	}
	if finish {
		// A function call comes whole, with the last event; Gemini 3
		// signs the first call of a step (thought-signatures).
		for i, fc := range c.functionCalls() {
			args := json.RawMessage(fc.args)
			if !json.Valid(args) {
				args = json.RawMessage(`{}`)
			}
			p := obj{{"functionCall", obj{{"name", fc.name}, {"args", args}}}}
			if i == 0 && strings.Contains(c.modelID, "gemini-3") {
				p = append(p, kv{"thoughtSignature", "ZW11bGF0b3Itc2lnbmF0dXJl"})
			}
			parts = append(parts, p)
		}
	}
	if parts != nil {
		content = obj{{"parts", parts}, {"role", "model"}}
	}
	cand := obj{{"content", content}}
	if finish {
		reason := "STOP"
		if c.finish == "length" {
			reason = "MAX_TOKENS"
		}
		cand = append(cand, kv{"finishReason", reason})
	}
	cand = append(cand, kv{"index", 0})
	usage := obj{{"promptTokenCount", c.prompt}}
	if soFar > 0 {
		usage = append(usage, kv{"candidatesTokenCount", soFar})
	}
	usage = append(usage, kv{"totalTokenCount", c.prompt + soFar},
		kv{"promptTokensDetails", []obj{{{"modality", "TEXT"}, {"tokenCount", c.prompt}}}})
	return obj{{"candidates", []obj{cand}}, {"usageMetadata", usage}, {"modelVersion", c.modelID}, {"responseId", c.responseID()}}
}

// gemThought is an event carrying a piece of thinking (includeThoughts).
func (c *call) gemThought(text string) obj {
	content := obj{{"parts", []obj{{{"text", text}, {"thought", true}}}}, {"role", "model"}}
	return obj{{"candidates", []obj{{{"content", content}, {"index", 0}}}}, {"modelVersion", c.modelID}, {"responseId", c.responseID()}}
}

// gemRefusal is a prompt blocked by safety: 200, no candidates.
func (c *call) gemRefusal() obj {
	ratings := []obj{
		{{"category", "HARM_CATEGORY_SEXUALLY_EXPLICIT"}, {"probability", "NEGLIGIBLE"}},
		{{"category", "HARM_CATEGORY_HATE_SPEECH"}, {"probability", "NEGLIGIBLE"}},
		{{"category", "HARM_CATEGORY_HARASSMENT"}, {"probability", "HIGH"}},
		{{"category", "HARM_CATEGORY_DANGEROUS_CONTENT"}, {"probability", "NEGLIGIBLE"}},
	}
	return obj{{"promptFeedback", obj{{"blockReason", "SAFETY"}, {"safetyRatings", ratings}}},
		{"usageMetadata", obj{{"promptTokenCount", c.prompt}, {"totalTokenCount", c.prompt},
			{"promptTokensDetails", []obj{{{"modality", "TEXT"}, {"tokenCount", c.prompt}}}}}},
		{"modelVersion", c.modelID}, {"responseId", c.responseID()}}
}

func (e *Emulator) answerGemini(w http.ResponseWriter, r *http.Request, c *call) int {
	sseMode := r.URL.Query().Get("alt") == "sse"
	if !c.stream {
		body := pretty(c.gemEvent(c.answer, true, c.completion))
		if c.kind == Refused {
			body = pretty(c.gemRefusal())
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		if c.kind == StreamCut || c.kind == StreamStall {
			w.WriteHeader(http.StatusOK)
			w.Write(body[:len(body)/2])
			flush(w)
			if c.kind == StreamStall {
				e.hang(r.Context(), c)
			}
			panic(http.ErrAbortHandler)
		}
		w.WriteHeader(http.StatusOK)
		w.Write(body)
		return http.StatusOK
	}
	if !sseMode {
		return e.gemArray(w, r, c)
	}
	ctx := r.Context()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	s := newSSE(w, c.kind)
	if c.kind == Refused {
		s.event(googleLine(c.gemRefusal()))
		return http.StatusOK
	}
	for _, r := range chunks(c.step.Reasoning) {
		if !e.between(ctx, c) {
			return http.StatusOK
		}
		s.event(googleLine(c.gemThought(r)))
	}
	pieces, limit, cut := streamPlan(c)
	if len(pieces) == 0 {
		s.event(googleLine(c.gemEvent("", true, 0)))
		return http.StatusOK
	}
	sent := 0
	for i := range limit {
		if c.kind == StreamMalformedEvent && i == limit/2 {
			s.raw(garbageEvent + s.eol + s.eol)
		}
		if i > 0 && !e.between(ctx, c) {
			return http.StatusOK
		}
		sent += len(pieces[i])
		last := !cut && i == len(pieces)-1
		soFar := tokensOf(sent)
		s.event(googleLine(c.gemEvent(pieces[i], last, soFar)))
	}
	switch c.kind {
	case StreamStall:
		e.stall(ctx, c)
	case ConnReset:
		resetConn(w)
	case StreamErrorEvent:
		s.event(googleLine(obj{{"error", obj{{"code", 500}, {"message", "Internal error encountered."}, {"status", "INTERNAL"}}}}))
	}
	return http.StatusOK
}

// gemArray streams without alt=sse: one JSON array written element by
// element.
func (e *Emulator) gemArray(w http.ResponseWriter, r *http.Request, c *call) int {
	ctx := r.Context()
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(http.StatusOK)
	pieces, limit, cut := streamPlan(c)
	io.WriteString(w, "[")
	sent := 0
	for i := range limit {
		if i > 0 {
			if !e.between(ctx, c) {
				return http.StatusOK
			}
			io.WriteString(w, ",\r\n")
		}
		sent += len(pieces[i])
		w.Write(pretty(c.gemEvent(pieces[i], !cut && i == len(pieces)-1, tokensOf(sent))))
		flush(w)
	}
	if cut {
		switch c.kind {
		case StreamStall:
			e.stall(ctx, c)
		case ConnReset:
			resetConn(w)
		}
		return http.StatusOK
	}
	io.WriteString(w, "]")
	return http.StatusOK
}

// geminiFailure is Google's pretty-printed error for a kind.
func geminiFailure(c *call, now time.Time) failure {
	switch c.kind {
	case RateMinute, RateDay:
		return geminiRate(c, now)
	case HighDemand:
		return gErr(503, "This model is currently experiencing high demand. Spikes in demand are usually temporary. Please try again later.", "UNAVAILABLE")
	case Unauthorized:
		msg := "API key not valid. Please pass a valid API key."
		return gErr(400, msg, "INVALID_ARGUMENT",
			obj{{"@type", "type.googleapis.com/google.rpc.ErrorInfo"}, {"reason", "API_KEY_INVALID"}, {"domain", "googleapis.com"},
				{"metadata", obj{{"service", "generativelanguage.googleapis.com"}}}},
			obj{{"@type", "type.googleapis.com/google.rpc.LocalizedMessage"}, {"locale", "en-US"}, {"message", msg}})
	case Forbidden:
		return gErr(403, "Your API key was reported as leaked. Please use another API key.", "PERMISSION_DENIED")
	case NotFound, Decommissioned:
		return gErr(404, "models/"+c.modelID+" is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.", "NOT_FOUND")
	case TooLarge, ContextLength:
		return gErr(400, fmt.Sprintf("The input token count (%d) exceeds the maximum number of tokens allowed (1048575).", c.prompt+1048576), "INVALID_ARGUMENT")
	case BadThinking:
		return gErr(400, "Thinking level is not supported for this model.", "INVALID_ARGUMENT")
	}
	msg := c.step.Text
	if msg == "" {
		msg = "Request contains an invalid argument."
	}
	return gErr(400, msg, "INVALID_ARGUMENT")
}

func geminiRate(c *call, now time.Time) failure {
	ri := c.rate
	metric := "generativelanguage.googleapis.com/generate_content_free_tier_requests"
	if ri.Tokens {
		metric = "generativelanguage.googleapis.com/generate_content_free_tier_input_token_count"
	}
	quotaID := map[[2]bool]string{
		{false, false}: "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
		{true, false}:  "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
		{false, true}:  "GenerateContentInputTokensPerModelPerMinute-FreeTier",
		{true, true}:   "GenerateContentInputTokensPerModelPerDay-FreeTier",
	}[[2]bool{ri.Day, ri.Tokens}]
	// A per-day 429 still names a short delay (docs/PROVIDERS.md, Gemini's
	// errors).
	delay := ri.Wait
	if ri.Day && (c.limited || c.step.RetryAfter == 0) {
		delay = untilMinute(now)
	}
	msg := fmt.Sprintf("You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. To monitor your current usage, head to: https://ai.dev/rate-limit. \n* Quota exceeded for metric: %s, limit: %d, model: %s\nPlease retry in %s.",
		metric, ri.Limit, c.modelID, protoDuration(delay))
	return gErr(429, msg, "RESOURCE_EXHAUSTED",
		obj{{"@type", "type.googleapis.com/google.rpc.QuotaFailure"}, {"violations", []obj{{
			{"quotaMetric", metric}, {"quotaId", quotaID},
			{"quotaDimensions", obj{{"location", "global"}, {"model", c.modelID}}},
			{"quotaValue", fmt.Sprint(ri.Limit)},
		}}}},
		obj{{"@type", "type.googleapis.com/google.rpc.Help"}, {"links", []obj{{
			{"description", "Learn more about Gemini API quotas"}, {"url", "https://ai.google.dev/gemini-api/docs/rate-limits"},
		}}}},
		obj{{"@type", "type.googleapis.com/google.rpc.RetryInfo"}, {"retryDelay", protoDuration(delay)}})
}
