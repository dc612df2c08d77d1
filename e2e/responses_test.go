package e2e_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/emulator/emutest"
)

// goClient is openai-go pointed at the gateway, with no retries.
func goClient(s *stack) openai.Client {
	return openai.NewClient(option.WithBaseURL(s.srv.URL+"/v1/"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
}

var weatherParams = map[string]any{
	"type":                 "object",
	"properties":           map[string]any{"city": map[string]any{"type": "string"}},
	"required":             []string{"city"},
	"additionalProperties": false,
}

// TestResponsesOpenAIGo (issue 33): openai-go's Responses API, unmodified,
// against the gateway, on a chain whose first route speaks Gemini natively:
// a whole answer, a streamed one whose events the SDK's accumulator takes,
// a two-turn function tool loop (function_call, then function_call_output
// answered), and text.format json_schema; previous_response_id is a 400
// the SDK reports as such.
func TestResponsesOpenAIGo(t *testing.T) {
	checkLeaks(t)
	s := clientsStack(t)
	c := goClient(s)
	ctx := t.Context()

	r, err := c.Responses.New(ctx, responses.ResponseNewParams{
		Model:        "agent",
		Instructions: openai.String("Be brief."),
		Input:        responses.ResponseNewParamsInputUnion{OfString: openai.String("What does tollfree do?")},
	})
	if err != nil {
		t.Fatalf("whole: %v", err)
	}
	if r.Status != "completed" || !strings.Contains(r.OutputText(), "gemini/gemini-2.5-flash") || r.Model != "gemini/gemini-2.5-flash" || r.Usage.InputTokens == 0 {
		t.Errorf("whole: status %q, model %q, text %q, usage %+v", r.Status, r.Model, r.OutputText(), r.Usage)
	}

	// Streamed: typed events, the text's deltas, a completed response.
	st := c.Responses.NewStreaming(ctx, responses.ResponseNewParams{
		Model: "agent",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("What does tollfree do?")},
	})
	var types []string
	var deltas strings.Builder
	var done responses.Response
	for st.Next() {
		ev := st.Current()
		types = append(types, ev.Type)
		switch ev.Type {
		case "response.output_text.delta":
			deltas.WriteString(ev.Delta)
		case "response.completed":
			done = ev.Response
		}
	}
	if err := st.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	st.Close()
	if types[0] != "response.created" || types[len(types)-1] != "response.completed" || deltas.Len() == 0 || done.OutputText() != deltas.String() {
		t.Errorf("stream: events %v; deltas %q, final %q", types, deltas.String(), done.OutputText())
	}

	// A function tool loop of two turns.
	tools := []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{Name: "get_weather", Parameters: weatherParams, Strict: openai.Bool(true)}}}
	input := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("Weather in Paris?", responses.EasyInputMessageRoleUser)}
	r, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "agent", Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input}, Tools: tools})
	if err != nil {
		t.Fatalf("tool turn 1: %v", err)
	}
	var call responses.ResponseFunctionToolCall
	for _, it := range r.Output {
		if it.Type == "function_call" {
			call = it.AsFunctionCall()
		}
	}
	if call.Name != "get_weather" || call.CallID == "" || !json.Valid([]byte(call.Arguments)) {
		t.Fatalf("tool turn 1: output %+v", r.Output)
	}
	result := responses.ResponseInputItemParamOfFunctionCallOutput(`{"temp":21}`)
	result.OfFunctionCallOutput.CallID = openai.String(call.CallID)
	input = append(input, responses.ResponseInputItemParamOfFunctionCall(call.Arguments, call.CallID, call.Name), result)
	r, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "agent", Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input}, Tools: tools})
	if err != nil {
		t.Fatalf("tool turn 2: %v", err)
	}
	if !strings.Contains(r.OutputText(), `The tool answered: {"temp":21}`) {
		t.Errorf("tool turn 2: %q", r.OutputText())
	}

	// text.format json_schema: checked (and repaired) as chat's are.
	r, err = c.Responses.New(ctx, responses.ResponseNewParams{
		Model: "agent",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Weather in Paris, as JSON")},
		Text: responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{
			OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{Name: "weather", Schema: weatherParams, Strict: openai.Bool(true)},
		}},
	})
	if err != nil {
		t.Fatalf("json_schema: %v", err)
	}
	if got := r.OutputText(); got != `{"city":"example"}` {
		t.Errorf("json_schema: %q", got)
	}

	// What needs a stored response is refused, in the API's error shape.
	_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "agent", PreviousResponseID: openai.String("resp_1"),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("And?")}})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || apiErr.Param != "previous_response_id" || !strings.Contains(apiErr.Message, "keeps none") {
		t.Errorf("previous_response_id: %v", err)
	}
}

// TestResponsesFailoverAndBreak (issue 33): a Responses request goes
// through the same flow as chat: the Gemini route's 429 fails over to the
// OpenAI-compatible route, a stream cut after its first words is continued
// on it, and a stream that no route can continue ends with
// response.failed, never response.completed.
func TestResponsesFailoverAndBreak(t *testing.T) {
	checkLeaks(t)
	s := clientsStack(t)
	c := goClient(s)
	s.emu.Script("gemini", "gemini-2.5-flash", emulator.Step{Kind: emulator.RateMinute})
	r, err := c.Responses.New(t.Context(), responses.ResponseNewParams{Model: "agent", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")}})
	if err != nil || r.Model != "groq/meta-llama/llama-4-scout-17b-16e-instruct" {
		t.Fatalf("failover: %v, model %q", err, r.Model)
	}

	s.clk.Advance(10 * time.Minute) // the 429's rest is over

	// A stream cut after a few words is continued on the next route: the
	// client reads one whole answer and response.completed.
	emutest.SameAnswer(s.emu, rescueAnswer, "gemini/gemini-2.5-flash", "groq/meta-llama/llama-4-scout-17b-16e-instruct")
	s.emu.Script("gemini", "gemini-2.5-flash", emulator.Step{Kind: emulator.StreamCut, After: 20})
	st := c.Responses.NewStreaming(t.Context(), responses.ResponseNewParams{Model: "agent", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")}})
	var text strings.Builder
	var final responses.Response
	for st.Next() {
		ev := st.Current()
		if ev.Type == "response.output_text.delta" {
			text.WriteString(ev.Delta)
		}
		if ev.Type == "response.completed" {
			final = ev.Response
		}
	}
	st.Close()
	if err := st.Err(); err != nil || text.String() != rescueAnswer || final.OutputText() != rescueAnswer {
		t.Errorf("continued stream: %v; read %d words, final %d; want the %d of one whole answer", err,
			len(strings.Fields(text.String())), len(strings.Fields(final.OutputText())), len(strings.Fields(rescueAnswer)))
	}
	if final.Model != "groq/meta-llama/llama-4-scout-17b-16e-instruct" {
		t.Errorf("response.completed names %q, want the route that finished the answer (issue 33)", final.Model)
	}

	s.clk.Advance(10 * time.Minute) // the cut's rest is over
	s.emu.Script("gemini", "gemini-2.5-flash", emulator.Step{Kind: emulator.StreamCut, After: 3})
	s.emu.Script("groq", "meta-llama/llama-4-scout-17b-16e-instruct", emulator.Step{Kind: emulator.ServerError}, emulator.Step{Kind: emulator.ServerError})
	st = c.Responses.NewStreaming(t.Context(), responses.ResponseNewParams{Model: "agent", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")}})
	last := ""
	for st.Next() {
		last = st.Current().Type
	}
	st.Close()
	if last != "response.failed" {
		t.Errorf("a stream no route continued ended with %q (err %v), want response.failed", last, st.Err())
	}
}

// TestImageCapability (issue 33): a request with an image to a chain whose
// only route takes none gets a 400 naming vision and the route; with a
// vision route second, that route answers. Through openai-go's chat
// completions, with the image inline.
func TestImageCapability(t *testing.T) {
	checkLeaks(t)
	s := clientsStack(t)
	c := goClient(s)
	msg := openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
		openai.TextContentPart("What is in this image?"),
		openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "data:image/png;base64,iVBORw0KGgo="}),
	})
	_, err := c.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{Model: "textonly", Messages: []openai.ChatCompletionMessageParamUnion{msg}})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || apiErr.Code != "unsupported_capability" ||
		!strings.Contains(apiErr.Message, "vision (images)") || !strings.Contains(apiErr.Message, "groq/llama-3.3-70b-versatile lacks vision") {
		t.Fatalf("image on a text-only chain: %v", err)
	}
	if n := s.emu.Calls("groq", "llama-3.3-70b-versatile"); n != 0 {
		t.Errorf("the text-only route was called %d times", n)
	}
	cc, err := c.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{Model: "lookers", Messages: []openai.ChatCompletionMessageParamUnion{msg}})
	if err != nil || cc.Model != "gemini/gemini-2.5-flash" || !strings.Contains(cc.Choices[0].Message.Content, "I was shown an image/png of 8 bytes") {
		t.Fatalf("image with a vision route second: %v %+v", err, cc)
	}
	// An image by URL: Gemini's API takes none, and the gateway fetches
	// none by default; the text-only route cannot see it either.
	remote := openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
		openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "https://images.example.com/cat.png"}),
	})
	_, err = c.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{Model: "lookers", Messages: []openai.ChatCompletionMessageParamUnion{remote}})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || !strings.Contains(apiErr.Message, "an image given by URL") || strings.Contains(apiErr.Message, "images.example.com") {
		t.Errorf("image by URL: %v", err)
	}
}

// TestChatToolsStreamedFromGemini (issue 33): a streamed chat completion
// with tools, answered by Gemini's native API: openai-go's accumulator
// reads Gemini's function call as OpenAI's tool_calls deltas (an index,
// an id, the name and the arguments), finish_reason tool_calls; the tool's
// result streams back as text.
func TestChatToolsStreamedFromGemini(t *testing.T) {
	checkLeaks(t)
	s := clientsStack(t)
	c := goClient(s)
	tools := []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "get_weather", Parameters: weatherParams})}
	msgs := []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")}
	stream := func() openai.ChatCompletionAccumulator {
		st := c.Chat.Completions.NewStreaming(t.Context(), openai.ChatCompletionNewParams{Model: "agent", Messages: msgs, Tools: tools})
		defer st.Close()
		var acc openai.ChatCompletionAccumulator
		for st.Next() {
			acc.AddChunk(st.Current())
		}
		if err := st.Err(); err != nil {
			t.Fatal(err)
		}
		return acc
	}
	acc := stream()
	ch := acc.Choices[0]
	if ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) != 1 || ch.Message.ToolCalls[0].Function.Name != "get_weather" ||
		!strings.HasPrefix(ch.Message.ToolCalls[0].ID, "call_") || !json.Valid([]byte(ch.Message.ToolCalls[0].Function.Arguments)) || acc.Model != "gemini/gemini-2.5-flash" {
		t.Fatalf("streamed tool call: %+v", ch)
	}
	msgs = append(msgs, ch.Message.ToParam(), openai.ToolMessage(`{"temp":21}`, ch.Message.ToolCalls[0].ID))
	acc = stream()
	if got := acc.Choices[0].Message.Content; got != `The tool answered: {"temp":21}` || acc.Choices[0].FinishReason != "stop" {
		t.Errorf("after the tool: %q, %q", got, acc.Choices[0].FinishReason)
	}
}
