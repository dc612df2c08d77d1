package gemini

import (
	"encoding/json"
	"strings"

	"github.com/tollfree/tollfree/llm"
)

// The conversation as Gemini takes it (issue 33): each turn's parts are
// text, inlineData (images, audio and files, base64 with their MIME type),
// functionCall (an assistant's tool call) and functionResponse (a tool
// message's result). A turn made of one role's consecutive messages has
// their texts joined by a blank line, as before; parts of other kinds keep
// their place between the texts.

// wireBlob is inlineData: a file's bytes in base64, with its MIME type.
type wireBlob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

// wireFunctionCall is a functionCall part: the model asks for a function.
// Args is a JSON object. ID is set by some models (Gemini 3), and by none
// on a request.
type wireFunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// wireFunctionResponse is a functionResponse part: a function's result,
// as a JSON object.
type wireFunctionResponse struct {
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

// skipSignature is the thoughtSignature sent with a functionCall part that
// a client replays without the signature the model gave it: OpenAI's
// tool_calls have no place for one, and Gemini 3 models refuse a replayed
// call without any (400 "Function call is missing a thought_signature").
// Google documents this value for history that carries no signature
// (https://ai.google.dev/gemini-api/docs/thought-signatures, its FAQ).
const skipSignature = "skip_thought_signature_validator"

// needsSignature reports whether the model checks the thought signatures of
// replayed function calls: every Gemini model from 3 on; not 2.x, not Gemma.
func needsSignature(model string) bool {
	m := strings.ToLower(strings.TrimPrefix(model, "models/"))
	return strings.HasPrefix(m, "gemini-") && !strings.HasPrefix(m, "gemini-1") && !strings.HasPrefix(m, "gemini-2")
}

// turnBuilder gathers the parts of the turn being built. Texts are held
// in pending until a part of another kind, or the turn's end, joins them.
type turnBuilder struct {
	role    string
	parts   []wirePart
	pending []string
}

func (t *turnBuilder) text(s string) {
	if s != "" {
		t.pending = append(t.pending, s)
	}
}

func (t *turnBuilder) part(p wirePart) {
	t.flushText()
	t.parts = append(t.parts, p)
}

func (t *turnBuilder) flushText() {
	switch len(t.pending) {
	case 0:
		return
	case 1:
		t.parts = append(t.parts, wirePart{Text: t.pending[0]})
	default:
		t.parts = append(t.parts, wirePart{Text: strings.Join(t.pending, "\n\n")})
	}
	t.pending = t.pending[:0]
}

// end returns the turn's content, and readies the builder for the next
// turn; ok is false for a turn with no parts.
func (t *turnBuilder) end() (wireContent, bool) {
	t.flushText()
	if len(t.parts) == 0 {
		return wireContent{}, false
	}
	c := wireContent{Role: t.role, Parts: t.parts}
	t.parts = nil
	return c, true
}

// toolCall is one call of an assistant's tool_calls, as OpenAI writes it.
type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// parseToolCalls reads an assistant's tool_calls; nil when they do not
// parse.
func parseToolCalls(raw json.RawMessage) []toolCall {
	var calls []toolCall
	if json.Unmarshal(raw, &calls) != nil {
		return nil
	}
	return calls
}

// argsObject returns a call's arguments as the JSON object Gemini's args
// wants: "" is no arguments; anything but an object is not ok.
func argsObject(args string) (json.RawMessage, bool) {
	a := strings.TrimSpace(args)
	if a == "" {
		return json.RawMessage(`{}`), true
	}
	if a[0] != '{' || !json.Valid([]byte(a)) {
		return nil, false
	}
	return json.RawMessage(a), true
}

// responseObject returns a tool message's content as the JSON object
// Gemini's functionResponse.response wants: a JSON object as it is,
// anything else (text, a number, an array) as {"result": ...}, its JSON
// value when it is JSON, else its text.
func responseObject(content string) json.RawMessage {
	c := strings.TrimSpace(content)
	if c != "" && json.Valid([]byte(c)) {
		if c[0] == '{' {
			return json.RawMessage(c)
		}
		return json.RawMessage(`{"result":` + c + `}`)
	}
	b, _ := json.Marshal(map[string]string{"result": content})
	return b
}

// userParts adds a message's parts to t: its text, or its content parts
// (text, images, audio, files) when it has them. media holds the files a
// remote URL was fetched into.
func userParts(t *turnBuilder, m *llm.Message, media map[string]*wireBlob) {
	if len(m.Parts) == 0 {
		t.text(m.Content)
		return
	}
	parts, err := llm.ParseParts(m.Parts)
	if err != nil {
		t.text(m.Content)
		return
	}
	for _, p := range parts {
		switch p.Type {
		case llm.PartText:
			t.text(p.Text)
		case llm.PartImage:
			if b := media[p.URL]; b != nil {
				t.part(wirePart{InlineData: b})
			} else if b, ok := dataURL(p.URL); ok {
				t.part(wirePart{InlineData: b})
			}
		case llm.PartAudio:
			if mime, ok := audioMIME(p.Format); ok {
				t.part(wirePart{InlineData: &wireBlob{MimeType: mime, Data: p.Data}})
			}
		case llm.PartFile:
			if b, ok := dataURL(p.Data); ok {
				t.part(wirePart{InlineData: b})
			}
		}
	}
}

// buildContents turns the conversation into Gemini's systemInstruction and
// alternating contents (see the package doc for the rules). It is linear in
// the conversation's size: each turn's text is joined once, when the turn
// ends, never by appending to what was already joined (issue 10: 110,000
// one-role messages took 9 s of CPU that way). media holds the remote
// images fetched for this call, by URL.
func buildContents(msgs []llm.Message, model string, media map[string]*wireBlob) (*wireContent, []wireContent) {
	var system []string
	var contents []wireContent
	var names map[string]string // tool call id → function name
	t := &turnBuilder{}
	sign := needsSignature(model)
	for i := range msgs {
		m := &msgs[i]
		r := "user" // user, tool, and anything unknown
		switch m.Role {
		case "system", "developer":
			if m.Content != "" {
				system = append(system, m.Content)
			}
			continue
		case "assistant":
			r = "model"
		}
		calls := parseToolCalls(m.ToolCalls)
		if m.Content == "" && len(m.Parts) == 0 && len(calls) == 0 {
			continue
		}
		if r != t.role {
			if c, ok := t.end(); ok {
				contents = append(contents, c)
			}
			t.role = r
		}
		switch {
		case m.Role == "assistant":
			t.text(m.Content)
			for j, tc := range calls {
				args, _ := argsObject(tc.Function.Arguments)
				p := wirePart{FunctionCall: &wireFunctionCall{Name: tc.Function.Name, Args: args}}
				if sign && j == 0 {
					// Gemini wants the signature on the first call of a
					// step only (parallel calls carry one between them).
					p.ThoughtSignature = skipSignature
				}
				t.part(p)
				if names == nil {
					names = map[string]string{}
				}
				names[tc.ID] = tc.Function.Name
			}
		case m.Role == "tool":
			name := names[m.ToolCallID]
			if name == "" {
				name = m.Name
			}
			t.part(wirePart{FunctionResponse: &wireFunctionResponse{Name: name, Response: responseObject(m.Content)}})
		default:
			userParts(t, m, media)
		}
	}
	if c, ok := t.end(); ok {
		contents = append(contents, c)
	}
	if len(system) == 0 {
		return nil, contents
	}
	text := strings.Join(system, "\n\n")
	if len(contents) == 0 {
		// Gemini rejects a request without contents.
		return nil, []wireContent{{Role: "user", Parts: []wirePart{{Text: text}}}}
	}
	return &wireContent{Parts: []wirePart{{Text: text}}}, contents
}
