package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/tollfree/tollfree/llm"
)

// Limits bound what DecodeRequestWithin accepts from one request, so that
// no request makes the gateway (or a provider adapter) do unbounded work:
// issue 10's 3.6 MiB request of 110,000 messages took seconds of CPU in the
// Gemini translation. A zero field is no limit.
type Limits struct {
	// Messages is the most messages a request may carry. The count is
	// checked before the messages are decoded, so an over-long array costs
	// one scan of its bytes and no allocation.
	Messages int
	// ContentBytes is the most bytes of message text (every message's
	// content, decoded, text parts joined) a request may carry, all
	// messages together.
	ContentBytes int64
}

// The codes of a request over a limit, as OpenAI names them.
const (
	CodeArrayTooLong  = "array_above_max_length"
	CodeStringTooLong = "string_above_max_length"
)

// DecodeRequestWithin is DecodeRequest with limits: a request with more
// than lim.Messages messages gets a *RequestError for "messages" with code
// array_above_max_length, worded as OpenAI words its own; one whose
// messages' text passes lim.ContentBytes gets one for the content of the
// message where it passed, with code string_above_max_length.
func DecodeRequestWithin(body []byte, lim Limits) (req *llm.Request, model string, err error) {
	if lim.Messages > 0 {
		if err := checkMessageCount(body, lim.Messages); err != nil {
			return nil, "", err
		}
	}
	req, model, err = DecodeRequest(body)
	if err != nil || lim.ContentBytes <= 0 {
		return req, model, err
	}
	var total int64
	for i := range req.Messages {
		total += int64(len(req.Messages[i].Content))
		if total > lim.ContentBytes {
			param := "messages[" + strconv.Itoa(i) + "].content"
			return nil, "", &RequestError{
				Param: param,
				Message: fmt.Sprintf("Invalid '%s': the messages' text reaches %d bytes here, over this gateway's limit of %d bytes for all messages of a request together. Shorten the conversation.",
					param, total, lim.ContentBytes),
				Code: CodeStringTooLong,
			}
		}
	}
	return req, model, nil
}

// checkMessageCount refuses a body whose "messages" array is longer than
// max. It only skips over values. A body that is not valid JSON passes here
// and is refused by the decoder with its precise syntax error (which
// encoding/json finds before it decodes anything).
func checkMessageCount(body []byte, max int) error {
	n := -1
	_ = eachField(body, func(rawKey, value []byte) {
		if len(value) > 0 && value[0] == '[' && isMessagesKey(rawKey) {
			n = countElements(value) // encoding/json keeps the last of duplicate keys
		}
	})
	if n <= max || !json.Valid(body) {
		return nil
	}
	return &RequestError{
		Param:   "messages",
		Message: fmt.Sprintf("Invalid 'messages': array too long. Expected an array with maximum length %d, but got an array with length %d instead.", max, n),
		Code:    CodeArrayTooLong,
	}
}

// isMessagesKey reports whether a raw (quoted) key is "messages", matched
// case-insensitively as encoding/json matches it.
func isMessagesKey(rawKey []byte) bool {
	k := rawKey[1 : len(rawKey)-1]
	if bytes.IndexByte(k, '\\') >= 0 {
		k = []byte(unquote(rawKey))
	}
	return bytes.EqualFold(k, []byte("messages"))
}

// countElements counts the values of the JSON array arr, skipping over
// each.
func countElements(arr []byte) int {
	i := skipSpace(arr, 1)
	if i >= len(arr) || arr[i] == ']' {
		return 0
	}
	n := 0
	for i < len(arr) {
		i = skipValue(arr, skipSpace(arr, i))
		n++
		i = skipSpace(arr, i)
		if i >= len(arr) || arr[i] != ',' {
			break
		}
		i++
	}
	return n
}
