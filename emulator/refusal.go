package emulator

// Refusal is how a model words its refusal of a request field it does not
// take (Model.Refusal), when not as its flavor usually does. Each is the
// wording of a public capture, cited in failure/testdata/README.md.
type Refusal string

// The wordings of a refused field.
const (
	// RefusalFlavor is the flavor's usual wording (unsupportedFailure).
	RefusalFlavor Refusal = ""
	// RefusalUnknownParameter is OpenAI's 400 for a field it does not
	// know: "Unknown parameter: 'x'.", code unknown_parameter.
	RefusalUnknownParameter Refusal = "unknown_parameter"
	// RefusalUnrecognized is OpenAI's older 400: "Unrecognized request
	// argument supplied: x", param and code null.
	RefusalUnrecognized Refusal = "unrecognized_argument"
	// RefusalCohere is Cohere's 422: "unknown field: parameter 'x' is not
	// a valid field. ...".
	RefusalCohere Refusal = "cohere_unknown_field"
	// RefusalNIM is NVIDIA NIM's 422 problem details: "body -> x\n  Extra
	// inputs are not permitted (type=extra_forbidden)".
	RefusalNIM Refusal = "nim_extra_forbidden"
	// RefusalVLLM is a vLLM server's 400, Pydantic's list in the message.
	RefusalVLLM Refusal = "vllm_extra_forbidden"
)

// failure is the refusal of the field name in r's words.
func (r Refusal) failure(name string) failure {
	switch r {
	case RefusalUnknownParameter:
		return oai(400, "Unknown parameter: '"+name+"'.", "invalid_request_error", name, "unknown_parameter", true)
	case RefusalUnrecognized:
		return oai(400, "Unrecognized request argument supplied: "+name, "invalid_request_error", nil, nil, true)
	case RefusalCohere:
		return failure{status: 422, body: compact(obj{{"message", "unknown field: parameter '" + name +
			"' is not a valid field. For proper usage, please refer to https://docs.cohere.com/reference/chat"}})}
	case RefusalNIM:
		return failure{status: 422, body: compact(obj{{"type", "urn:inference-service:problem-details:unprocessable-entity"},
			{"title", "Unprocessable Entity"}, {"status", 422},
			{"detail", "body -> " + name + "\n  Extra inputs are not permitted (type=extra_forbidden)"}})}
	case RefusalVLLM:
		msg := "[{'type': 'extra_forbidden', 'loc': ('body', '" + name + "'), 'msg': 'Extra inputs are not permitted', 'input': 1}]"
		return failure{status: 400, body: compact(obj{{"object", "error"}, {"message", msg}, {"type", "BadRequestError"}, {"param", nil}, {"code", 400}})}
	}
	return oai(400, "Unsupported parameter: '"+name+"' is not supported with this model.", "invalid_request_error", name, "unsupported_parameter", true)
}
