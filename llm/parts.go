package llm

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Content parts and what a request needs of a model (issue 33). A message's
// content may be an array of parts (Message.Parts): text, images
// (image_url, a data: URL or an http(s) one), audio (input_audio, base64
// with its format) and files. OpenAI-shaped upstreams get the array as it
// came; an adapter that speaks another dialect (Gemini's) reads it with
// ParseParts. A request whose parts or tools a route cannot take must skip
// that route (Needs), never reach it thinned.

// The part types of OpenAI's chat API.
const (
	PartText  = "text"
	PartImage = "image_url"
	PartAudio = "input_audio"
	PartFile  = "file"
)

// Part is one content part of a message.
type Part struct {
	// Type is the part's type: PartText, PartImage, PartAudio, PartFile, or
	// another the gateway does not know (kept, for an error to name).
	Type string
	// Text is a text part's text.
	Text string
	// URL is an image part's image_url.url: a data: URL or an http(s) one.
	URL string
	// Detail is an image part's image_url.detail ("auto", "low", "high").
	Detail string
	// Data is an audio part's base64 data, or a file part's file_data (a
	// data: URL).
	Data string
	// Format is an audio part's format ("wav", "mp3").
	Format string
	// Filename is a file part's filename; FileID its file_id (an uploaded
	// file, which no free provider here can read).
	Filename, FileID string
}

// wirePart is a content part as OpenAI's chat API writes it.
type wirePart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL *struct {
		URL    string `json:"url"`
		Detail string `json:"detail"`
	} `json:"image_url"`
	InputAudio *struct {
		Data   string `json:"data"`
		Format string `json:"format"`
	} `json:"input_audio"`
	File *struct {
		FileData string `json:"file_data"`
		FileID   string `json:"file_id"`
		Filename string `json:"filename"`
	} `json:"file"`
}

// ParseParts reads a message's array of content parts. A part whose fields
// do not parse is returned with its Type only; raw that is not an array is
// an error.
func ParseParts(raw json.RawMessage) ([]Part, error) {
	var ws []json.RawMessage
	if err := json.Unmarshal(raw, &ws); err != nil {
		return nil, err
	}
	out := make([]Part, 0, len(ws))
	for _, r := range ws {
		var w wirePart
		if err := json.Unmarshal(r, &w); err != nil {
			var t struct {
				Type string `json:"type"`
			}
			_ = json.Unmarshal(r, &t)
			out = append(out, Part{Type: t.Type})
			continue
		}
		p := Part{Type: w.Type, Text: w.Text}
		if w.ImageURL != nil {
			p.URL, p.Detail = w.ImageURL.URL, w.ImageURL.Detail
		}
		if w.InputAudio != nil {
			p.Data, p.Format = w.InputAudio.Data, w.InputAudio.Format
		}
		if w.File != nil {
			p.Data, p.FileID, p.Filename = w.File.FileData, w.File.FileID, w.File.Filename
		}
		out = append(out, p)
	}
	return out, nil
}

// Remote reports whether an image part's URL is to be fetched (http or
// https), rather than carried inline (a data: URL).
func (p Part) Remote() bool {
	u := strings.ToLower(p.URL)
	return strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")
}

// Needs are what a request needs of a model besides text.
type Needs uint8

// The needs.
const (
	// NeedTools: function tools (tools), or a tool loop's history
	// (assistant tool_calls, tool messages).
	NeedTools Needs = 1 << iota
	// NeedVision: an image part.
	NeedVision
	// NeedAudio: an audio part.
	NeedAudio
	// NeedMediaURL: an image given by http(s) URL, which a route that
	// takes media only inline must fetch.
	NeedMediaURL
)

// Has reports whether n holds every need of m.
func (n Needs) Has(m Needs) bool { return n&m == m }

// Needs reads what the request needs of a model: tools, images, audio.
// A request of plain text messages costs no parsing.
func (r *Request) Needs() Needs {
	var n Needs
	if t := bytes.TrimSpace(r.Extra["tools"]); len(t) > 0 && !bytes.Equal(t, []byte("null")) && !bytes.Equal(t, []byte("[]")) {
		n |= NeedTools
	}
	for i := range r.Messages {
		m := &r.Messages[i]
		if len(m.ToolCalls) > 0 || m.Role == "tool" {
			n |= NeedTools
		}
		if len(m.Parts) == 0 || !bytes.Contains(m.Parts, []byte(`"type"`)) {
			continue
		}
		parts, err := ParseParts(m.Parts)
		if err != nil {
			continue
		}
		for _, p := range parts {
			switch p.Type {
			case PartImage:
				n |= NeedVision
				if p.Remote() {
					n |= NeedMediaURL
				}
			case PartAudio:
				n |= NeedAudio
			}
		}
	}
	return n
}
