package tollfree

import (
	"context"
	"encoding/json"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/llm"
)

// Typed streams (issue 15). A streamed request whose response_format asks
// for JSON (json_object or json_schema) is answered whole, then replayed
// as a stream: the routes are asked without streaming, the answer is
// checked, repaired on the same route or handed to the next one exactly
// as a whole answer's is (route.Router.Chat), and only a valid answer, its
// JSON unwrapped, is streamed to the caller, in one content chunk and a
// finish. The other honest choice, checking a streamed answer at its end
// and ending it with an error event when it is invalid, would have sent
// the caller an invalid answer it must throw away, and left nothing to
// repair: a typed answer is read whole anyway. It also suits the
// providers: Groq's strict structured outputs are not available with
// streaming at all (seed 003, rule 5). The caller's first byte comes when
// the answer is ready, and the chain's attempt timeout is a whole-answer
// timeout for it. A stream with tools and no such response_format streams
// as it comes: its tool calls' arguments are not checked.

// typedStream reports whether a streamed request is answered whole: its
// response_format asks for JSON.
func typedStream(req *llm.Request) bool {
	var rf struct {
		Type string `json:"type"`
	}
	if len(req.ResponseFormat) == 0 || json.Unmarshal(req.ResponseFormat, &rf) != nil {
		return false
	}
	return rf.Type == "json_object" || rf.Type == "json_schema"
}

// answerTypedStream is answerStream for a typed request: the whole flow
// past the caller check (the cache, the routes, the fallback) for the
// request unstreamed, replayed as a stream.
func (g *Gateway) answerTypedStream(ctx context.Context, ch *config.Chain, c *Call, id string) (*AnswerStream, error) {
	whole := *c.Request
	whole.Stream, whole.IncludeUsage = false, false
	wc := *c
	wc.Request = &whole
	a, err := g.answer(ctx, ch, &wc, id)
	if err != nil {
		return nil, err
	}
	r := &replay{
		chunks: [2]llm.Chunk{
			{Role: "assistant", Content: a.Content, Reasoning: a.Reasoning, ToolCalls: deltaToolCalls(a.ToolCalls)},
			{FinishReason: finishOf(a.FinishReason)},
		},
		usage: a.Usage, exact: a.UsageKnown,
	}
	return &AnswerStream{ChunkStream: r, ServedBy: a.ServedBy, Route: a.Route, RequestID: id, CacheMiss: a.CacheMiss}, nil
}

func finishOf(reason string) string {
	if reason == "" {
		return "stop"
	}
	return reason
}

// deltaToolCalls turns a whole answer's tool_calls into a stream delta's:
// each call gets the "index" a streamed delta carries (clients gather a
// call's pieces by it). Calls that already have one, or an array that does
// not parse, are left as they are.
func deltaToolCalls(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	var calls []map[string]json.RawMessage
	if json.Unmarshal(raw, &calls) != nil {
		return raw
	}
	for i, c := range calls {
		if _, ok := c["index"]; !ok {
			c["index"], _ = json.Marshal(i)
		}
	}
	out, err := json.Marshal(calls)
	if err != nil {
		return raw
	}
	return out
}

// JSONSchemaFormat returns a Request.ResponseFormat asking for JSON that
// matches schema (a JSON Schema), named name, as OpenAI's response_format
// json_schema does; strict is OpenAI's flag, passed on to the routes that
// enforce schemas. Every answer is checked against schema whatever strict
// says. It panics if schema is not JSON: that is a mistake in the calling
// code.
func JSONSchemaFormat(name string, schema json.RawMessage, strict bool) json.RawMessage {
	b, err := json.Marshal(schemaFormat{Type: "json_schema", JSONSchema: namedSchema{Name: name, Strict: strict, Schema: schema}})
	if err != nil {
		panic("tollfree: JSONSchemaFormat: the schema is not JSON: " + err.Error())
	}
	return b
}

// schemaFormat is OpenAI's response_format json_schema.
type schemaFormat struct {
	Type       string      `json:"type"`
	JSONSchema namedSchema `json:"json_schema"`
}

type namedSchema struct {
	Name   string          `json:"name"`
	Strict bool            `json:"strict,omitempty"`
	Schema json.RawMessage `json:"schema"`
}

// JSONObjectFormat returns a Request.ResponseFormat asking for a JSON
// object (OpenAI's JSON mode). OpenAI-style JSON mode wants the
// conversation to say "JSON".
func JSONObjectFormat() json.RawMessage { return json.RawMessage(`{"type":"json_object"}`) }
