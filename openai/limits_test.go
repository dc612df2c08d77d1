package openai

import (
	"errors"
	"strings"
	"testing"
)

func TestDecodeRequestWithin(t *testing.T) {
	msg := `{"role":"user","content":"hello"}`
	many := func(n int) string { return strings.TrimSuffix(strings.Repeat(msg+",", n), ",") }
	lim := Limits{Messages: 3, ContentBytes: 12}
	tests := []struct {
		name, body  string
		param, code string // "" when accepted
		inMessage   string
	}{
		{"at the limits", `{"messages":[` + many(2) + `]}`, "", "", ""},
		{"one message too many", `{"messages":[` + many(4) + `]}`, "messages", CodeArrayTooLong,
			"Invalid 'messages': array too long. Expected an array with maximum length 3, but got an array with length 4 instead."},
		{"key in another case", `{"Messages":[` + many(5) + `]}`, "messages", CodeArrayTooLong, "length 5"},
		{"key escaped", `{"m\u0065ssages":[` + many(5) + `]}`, "messages", CodeArrayTooLong, "length 5"},
		{"nested arrays count once", `{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"text","text":"c"},{"type":"text","text":"d"}]}]}`, "", "", ""},
		{"last duplicate counts", `{"messages":[` + many(9) + `],"messages":[` + many(1) + `]}`, "", "", ""},
		{"text over the limit", `{"messages":[` + many(2) + `,{"role":"user","content":"abc"}]}`, "messages[2].content", CodeStringTooLong,
			"the messages' text reaches 13 bytes here, over this gateway's limit of 12 bytes"},
		{"broken JSON is a syntax error", `{"messages":[` + many(4), "", CodeInvalidJSON, "invalid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _, err := DecodeRequestWithin([]byte(tt.body), lim)
			if tt.code == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if len(req.Messages) == 0 {
					t.Fatal("no messages decoded")
				}
				return
			}
			var re *RequestError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want a *RequestError", err)
			}
			if re.Param != tt.param || re.Code != tt.code || !strings.Contains(re.Message, tt.inMessage) {
				t.Errorf("got param %q code %q message %q; want %q %q containing %q", re.Param, re.Code, re.Message, tt.param, tt.code, tt.inMessage)
			}
		})
	}
}

// FuzzDecodeRequestWithin checks that the limits agree with the decoder:
// a body DecodeRequest accepts is accepted within limits exactly when its
// message count and text are within them.
func FuzzDecodeRequestWithin(f *testing.F) {
	f.Add([]byte(`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"[x]"}]}`), 1, 3)
	f.Add([]byte(`{"messages" : [ {"role":"user","content":"a,b]"} , {"role":"user","content":[{"type":"text","text":"c"}]} ] }`), 2, 100)
	f.Add([]byte(`{"MESSAGES":[{"role":"user","content":"x"}],"messages":[]}`), 1, 1)
	f.Fuzz(func(t *testing.T, body []byte, maxMessages, maxBytes int) {
		lim := Limits{Messages: max(maxMessages%50, 0), ContentBytes: int64(max(maxBytes%1000, 0))}
		req, _, err := DecodeRequest(body)
		limited, _, errWithin := DecodeRequestWithin(body, lim)
		if err != nil {
			if errWithin == nil {
				t.Fatalf("DecodeRequest refused (%v) what DecodeRequestWithin took", err)
			}
			return
		}
		total := int64(0)
		for _, m := range req.Messages {
			total += int64(len(m.Content))
		}
		within := (lim.Messages == 0 || len(req.Messages) <= lim.Messages) && (lim.ContentBytes == 0 || total <= lim.ContentBytes)
		if within != (errWithin == nil) {
			t.Fatalf("%d messages, %d bytes of text, limits %+v: DecodeRequestWithin error %v", len(req.Messages), total, lim, errWithin)
		}
		if errWithin == nil && len(limited.Messages) != len(req.Messages) {
			t.Fatalf("within limits: %d messages, want %d", len(limited.Messages), len(req.Messages))
		}
	})
}
