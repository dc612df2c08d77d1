package openai

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/tollfree/tollfree/llm"
)

// MaxUserBytes bounds the "user" field: an end user's id, which a narrow
// key's limits count by (issue 32: a 1 MB one was forwarded as it came).
const MaxUserBytes = 256

// checkPassed checks the fields DecodeRequest passes on verbatim (in
// req.Extra) that every upstream would refuse or misread, so that a broken
// request is refused here, precisely, and never forwarded (issue 32:
// presence_penalty 1e309, tools [{}], tool_choice 5 went upstream):
// presence_penalty and frequency_penalty, numbers from -2 to 2; tools, an
// array of tools each with a type, a function tool with a function name;
// tool_choice, "none", "auto", "required" or an object with a type, a
// function's naming it. It also bounds req.User.
func checkPassed(req *llm.Request) error {
	if len(req.User) > MaxUserBytes {
		return &RequestError{Param: "user", Message: "user must be at most " + strconv.Itoa(MaxUserBytes) + " bytes, got " + strconv.Itoa(len(req.User)), Code: CodeInvalidValue}
	}
	for _, name := range [...]string{"presence_penalty", "frequency_penalty"} {
		if err := checkPenalty(name, req.Extra[name]); err != nil {
			return err
		}
	}
	if err := checkTools(req.Extra["tools"]); err != nil {
		return err
	}
	return checkToolChoice(req.Extra["tool_choice"])
}

// checkPenalty checks a penalty: absent, null, or a finite number from -2
// to 2.
func checkPenalty(name string, raw json.RawMessage) error {
	if len(raw) == 0 || isNull(raw) {
		return nil
	}
	if raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return &RequestError{Param: name, Message: name + " must be a number", Code: CodeInvalidType}
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(f, 0) || f < -2 || f > 2 {
		return &RequestError{Param: name, Message: name + " must be between -2 and 2, got " + string(raw), Code: CodeInvalidValue}
	}
	return nil
}

// toolShape is what checkTools and checkToolChoice read of a tool or a
// tool_choice object.
type toolShape struct {
	Type     *string         `json:"type"`
	Function json.RawMessage `json:"function"`
}

// functionName is a function tool's function object, or a tool_choice's.
type functionName struct {
	Name *string `json:"name"`
}

// checkTools checks tools: absent, null, or an array of objects each with
// a type; a function tool's function must name it.
func checkTools(raw json.RawMessage) error {
	if len(raw) == 0 || isNull(raw) {
		return nil
	}
	var tools []json.RawMessage
	if json.Unmarshal(raw, &tools) != nil {
		return &RequestError{Param: "tools", Message: "tools must be an array of tools", Code: CodeInvalidType}
	}
	for i, t := range tools {
		at := "tools[" + strconv.Itoa(i) + "]"
		if err := checkTyped(at, t, `a tool such as {"type": "function", "function": {"name": "..."}}`); err != nil {
			return err
		}
	}
	return nil
}

// checkToolChoice checks tool_choice: absent, null, "none", "auto",
// "required", or an object with a type (a function's naming it).
func checkToolChoice(raw json.RawMessage) error {
	if len(raw) == 0 || isNull(raw) {
		return nil
	}
	const want = `"none", "auto", "required" or {"type": "function", "function": {"name": "..."}}`
	if raw[0] == '"' {
		switch unquote(raw) {
		case "none", "auto", "required":
			return nil
		}
		return &RequestError{Param: "tool_choice", Message: "tool_choice must be " + want, Code: CodeInvalidValue}
	}
	return checkTyped("tool_choice", raw, want)
}

// checkTyped checks that raw, at param, is an object with a string type,
// and, of type function, a function object with a name; want says what is
// expected.
func checkTyped(param string, raw json.RawMessage, want string) error {
	raw = bytes.TrimSpace(raw)
	var t toolShape
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &t) != nil {
		return &RequestError{Param: param, Message: param + " must be " + want, Code: CodeInvalidType}
	}
	if t.Type == nil {
		return &RequestError{Param: param + ".type", Message: param + ".type is required", Code: CodeMissingParameter}
	}
	if *t.Type != "function" {
		return nil
	}
	var f functionName
	if len(t.Function) == 0 || isNull(t.Function) || json.Unmarshal(t.Function, &f) != nil {
		return &RequestError{Param: param + ".function", Message: param + ".function is required, an object with a name", Code: CodeMissingParameter}
	}
	if f.Name == nil || *f.Name == "" {
		return &RequestError{Param: param + ".function.name", Message: param + ".function.name is required", Code: CodeMissingParameter}
	}
	return nil
}
