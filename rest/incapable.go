package rest

// The traits of a route that refused content its model was thought to take
// (issue 33): a request that needs it skips the route, until the trait
// expires (TraitTTL), as NoPrefix sends continuations to instruct. They
// are learned from a refusal, never from a failure of the route itself.
const (
	// NoTools: the route refused function tools.
	NoTools = "notools"
	// NoVision: the route refused an image.
	NoVision = "novision"
	// NoAudio: the route refused audio.
	NoAudio = "noaudio"
)
