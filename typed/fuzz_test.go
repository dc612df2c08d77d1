package typed

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/tollfree/tollfree/llm"
)

// FuzzParse: whatever a caller sends as response_format or tools, Parse
// returns a spec, nil, or a *RequestError; it never panics.
func FuzzParse(f *testing.F) {
	f.Add([]byte(schemaRF(grade)), []byte(`[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]`))
	f.Add([]byte(`{"type":"json_object"}`), []byte(`null`))
	f.Add([]byte(schemaRF(`{"$ref":"#/$defs/a","$defs":{"a":{"anyOf":[{"$ref":"#/$defs/a"},{"type":"null"}]}}}`)), []byte(``))
	f.Add([]byte(schemaRF(`{"$anchor":"x","items":{"$ref":"#x"}}`)), []byte(`[]`))
	f.Fuzz(func(t *testing.T, rf, tools []byte) {
		req := &llm.Request{ResponseFormat: rf, Extra: map[string]json.RawMessage{"tools": tools}}
		s, err := Parse(req)
		var re *RequestError
		if err != nil && !errors.As(err, &re) {
			t.Fatalf("error %v is no RequestError", err)
		}
		if s != nil {
			s.Check(&llm.Response{Content: `{"a":1}`})
		}
	})
}

// FuzzCheck: any answer text is judged without a panic, and what Check
// calls the answer's JSON is part of the text.
func FuzzCheck(f *testing.F) {
	f.Add("Sure! ```json\n{\"finding\":\"F1\",\"grade\":\"unsupported\"}\n``` done")
	f.Add(`{"finding": [1, {"x": "}"}], "grade": "a"`)
	f.Add("{{{{[[[[")
	s, err := Parse(&llm.Request{ResponseFormat: schemaRF(grade)})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, answer string) {
		content, vs := s.Check(&llm.Response{Content: answer})
		if !strings.Contains(answer, content) {
			t.Fatalf("content %q is not in the answer", content)
		}
		_ = vs.String()
	})
}
