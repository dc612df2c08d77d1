package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"
)

// The shapes of traffic `tollfree sim -shape` plays (MakeShape).
const (
	// ShapeSite is seed 000's site day (Generate).
	ShapeSite = "site"
	// ShapeChat is a chat bot's day (seed 004): many users, bursts, some
	// long reasoning answers (GenerateChat).
	ShapeChat = "chat"
	// ShapeBatch is an evaluation batch (seed 002): one job making
	// hundreds of calls back to back on a same-model chain
	// (GenerateBatch, BatchChain).
	ShapeBatch = "batch"
	// ShapeWeek is seven site days whose demand repeats from day to day,
	// so that a profile of demand by hour can be learned.
	ShapeWeek = "week"
	// ShapeWrongLimits is a site day where the emulator enforces each
	// route's limits 50% above or below the presets the gateway is
	// configured with (WrongScale), so that budgets must learn.
	ShapeWrongLimits = "wrong-limits"
)

// Shapes lists the shapes in the order docs/SIM.md gives them.
func Shapes() []string {
	return []string{ShapeSite, ShapeChat, ShapeBatch, ShapeWeek, ShapeWrongLimits}
}

// Shape is a trace with the chain it is played on and the emulator's
// limits.
type Shape struct {
	Name string
	// What says in a line what the shape is.
	What  string
	Trace []Arrival
	// Chain is the routes asked, in order.
	Chain []string
	// Scale is Options.Scale: nil but for ShapeWrongLimits.
	Scale map[string]float64
}

// DefaultRequests is a shape's default size: questions a day (calls, for
// the batch).
func DefaultRequests(shape string) int {
	switch shape {
	case ShapeChat:
		return 4000
	case ShapeBatch:
		return 600
	}
	return 3000
}

// MakeShape returns the shape named, of requests questions a day (calls,
// for the batch; 0 means DefaultRequests) over days days (the week is
// always 7 and the batch 1; 0 means 1), generated from seed. The same
// arguments give the same shape.
func MakeShape(name string, requests, days int, seed uint64) (*Shape, error) {
	if requests <= 0 {
		requests = DefaultRequests(name)
	}
	days = max(days, 1)
	s := &Shape{Name: name, Chain: CappedChain()}
	switch name {
	case ShapeSite:
		s.What = "seed 000's site day"
		s.Trace = Generate(TraceOptions{Days: days, PerDay: requests, Seed: seed})
	case ShapeChat:
		s.What = "a chat bot's day (seed 004): evening-heavy, six bursts, one answer in eight a long reasoning one"
		s.Trace = GenerateChat(days, requests, seed)
	case ShapeBatch:
		s.What = "an evaluation batch (seed 002): one job's calls back to back on gpt-oss-120b's free routes"
		s.Trace, s.Chain = GenerateBatch(requests, seed), BatchChain()
	case ShapeWeek:
		s.What = "seven site days, the same demand each day"
		s.Trace = Generate(TraceOptions{Days: 7, PerDay: requests, Seed: seed})
	case ShapeWrongLimits:
		s.What = "a site day, each route's limits on the emulator 50% above or below the presets the gateway is configured with"
		s.Trace = Generate(TraceOptions{Days: days, PerDay: requests, Seed: seed})
		s.Scale = WrongScale(s.Chain, seed)
	default:
		return nil, fmt.Errorf("sim: unknown shape %q (want one of %q)", name, Shapes())
	}
	return s, nil
}

// GenerateChat returns days of a chat bot's traffic (seed 004's kind of
// bot): perDay questions a day from many users, quiet in the morning,
// busy in the evening (a peak near 21:30, four times the night's rate),
// plus six bursts a day of 3% of the day's questions within 8 minutes
// each (a channel waking up); prompts are conversations so far (200 to
// 6,000 tokens, most near 900), answers 60 to 600 tokens, but one in
// eight a long reasoning answer of 1,500 to 3,000 tokens. The same
// arguments give the same trace.
func GenerateChat(days, perDay int, seed uint64) []Arrival {
	rng := rand.New(rand.NewPCG(seed, 0x5eed004))
	var out []Arrival
	for day := range max(days, 1) {
		base := time.Duration(day) * 24 * time.Hour
		burst := perDay * 3 / 100
		for range 6 {
			at := 8*time.Hour + time.Duration(rng.Int64N(int64(15*time.Hour)))
			for range burst {
				out = append(out, chatQuestion(rng, base+at+time.Duration(rng.Int64N(int64(8*time.Minute)))))
			}
		}
		for range perDay - 6*burst {
			out = append(out, chatQuestion(rng, base+chatHour(rng)))
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At < out[j].At })
	return out
}

func chatQuestion(rng *rand.Rand, at time.Duration) Arrival {
	a := Arrival{At: at, Prompt: min(max(int(900*math.Exp(0.6*rng.NormFloat64())), 200), 6000)}
	if rng.IntN(8) == 0 {
		a.Answer = 1500 + rng.IntN(1501)
	} else {
		a.Answer = min(max(int(220*math.Exp(0.4*rng.NormFloat64())), 60), 600)
	}
	return a
}

// chatHour draws a time of day for a chat bot: a floor, an afternoon
// shoulder and an evening peak, by rejection.
func chatHour(rng *rand.Rand) time.Duration {
	for {
		h := rng.Float64() * 24
		d := 0.3 + 0.5*math.Exp(-sq(h-14)/12) + 1.0*math.Exp(-sq(h-21.5)/4)
		if rng.Float64()*1.6 < d {
			return time.Duration(h * float64(time.Hour))
		}
	}
}

// BatchChain is an evaluation job's same-model chain: gpt-oss-120b on
// the three free tiers that serve it with a daily cap (Groq, Cerebras,
// OpenRouter's :free; NVIDIA's 40 a minute with no daily cap would carry
// the whole job and show nothing).
func BatchChain() []string {
	return []string{"groq/openai/gpt-oss-120b", "cerebras/gpt-oss-120b", "openrouter/openai/gpt-oss-120b:free"}
}

// GenerateBatch returns an evaluation batch (seed 002): one job starting
// between 09:00 and 10:00 that makes calls calls back to back, one every
// 0.8 to 1.2 s (a loop that sends the next item as the answer comes; the
// trace keeps that pace whatever the answers take), each an item of 800
// to 2,500 prompt tokens (few-shot examples, most near 1,500) answered in
// 100 to 600 tokens. The same arguments give the same trace.
func GenerateBatch(calls int, seed uint64) []Arrival {
	rng := rand.New(rand.NewPCG(seed, 0x5eed002))
	at := 9*time.Hour + time.Duration(rng.Int64N(int64(time.Hour)))
	out := make([]Arrival, 0, calls)
	for range calls {
		out = append(out, Arrival{At: at,
			Prompt: min(max(int(1500*math.Exp(0.3*rng.NormFloat64())), 800), 2500),
			Answer: min(max(int(250*math.Exp(0.4*rng.NormFloat64())), 100), 600)})
		at += 800*time.Millisecond + time.Duration(rng.Int64N(int64(400*time.Millisecond)))
	}
	return out
}

// WrongScale returns, for each route, the factor by which the emulator's
// limits differ from the presets': 0.5 or 1.5, drawn from seed, both
// present when there are two routes or more. The same arguments give the
// same factors.
func WrongScale(routes []string, seed uint64) map[string]float64 {
	rng := rand.New(rand.NewPCG(seed, 0x5eedbad))
	out := map[string]float64{}
	low := 0
	for _, id := range routes {
		f := 1.5
		if rng.IntN(2) == 0 {
			f, low = 0.5, low+1
		}
		out[id] = f
	}
	if len(routes) > 1 && (low == 0 || low == len(routes)) {
		out[routes[0]] = 2 - out[routes[0]] // 0.5 <-> 1.5
	}
	return out
}
