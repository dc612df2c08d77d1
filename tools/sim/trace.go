package sim

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Arrival is one question of a trace.
type Arrival struct {
	// At is the arrival's offset from the start of the trace.
	At time.Duration
	// Prompt is the question's size in tokens, site content included (the
	// emulator's count: a token is four bytes of text).
	Prompt int
	// Answer is the answer's size in tokens; 0 means the site's 250.
	Answer int
}

// TraceOptions shape a generated trace.
type TraceOptions struct {
	// Days of traffic. Default 1.
	Days int
	// PerDay is the number of questions a day. Default 3,000: seed 000's
	// site-wide cap.
	PerDay int
	// Seed makes the trace reproducible. Default 0 is a valid seed.
	Seed uint64
}

// Generate returns a day (or days) of seed-000-like traffic: arrivals
// spread over the day the way a site's visitors come (quiet at night, a
// morning and an evening peak, about six times busier at the top than at
// the bottom) plus one burst a day of a tenth of the day's questions
// within 20 minutes (a post shared somewhere), each question carrying a
// few thousand tokens of site content (1,500 to 4,500, most near 2,800).
// The same options give the same trace.
func Generate(o TraceOptions) []Arrival {
	if o.Days <= 0 {
		o.Days = 1
	}
	if o.PerDay <= 0 {
		o.PerDay = 3000
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed000))
	var out []Arrival
	for day := range o.Days {
		base := time.Duration(day) * 24 * time.Hour
		burst := o.PerDay / 10
		// The burst starts between 13:00 and 17:00.
		bStart := 13*time.Hour + time.Duration(rng.Int64N(int64(4*time.Hour)))
		for range burst {
			out = append(out, Arrival{At: base + bStart + time.Duration(rng.Int64N(int64(20*time.Minute))), Prompt: promptSize(rng)})
		}
		for range o.PerDay - burst {
			out = append(out, Arrival{At: base + diurnal(rng), Prompt: promptSize(rng)})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At < out[j].At })
	return out
}

// diurnal draws a time of day from a density with a morning peak (10:00)
// and an evening one (20:00) over a quiet floor, by rejection.
func diurnal(rng *rand.Rand) time.Duration {
	for {
		h := rng.Float64() * 24
		d := 0.25 + math.Exp(-sq(h-10)/8) + 1.2*math.Exp(-sq(h-20)/6)
		if rng.Float64()*1.5 < d {
			return time.Duration(h * float64(time.Hour))
		}
	}
}

func sq(x float64) float64 { return x * x }

// promptSize draws a question's tokens: site content plus the question.
func promptSize(rng *rand.Rand) int {
	n := int(2800 * math.Exp(0.25*rng.NormFloat64()))
	return min(max(n, 1500), 4500)
}

// ReadTrace reads a trace as CSV: one arrival a line, its offset in seconds
// from the start (a decimal number), its prompt tokens and, optionally,
// its answer tokens (none or 0: the site's 250). A first line
// that does not parse as numbers is taken as a header. Lines need not be in
// order.
func ReadTrace(r io.Reader) ([]Arrival, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	var out []Arrival
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("sim: reading the trace: %w", err)
		}
		if len(rec) < 2 {
			return nil, fmt.Errorf("sim: trace line %d: want two fields (seconds, prompt tokens), got %d", line, len(rec))
		}
		sec, err1 := strconv.ParseFloat(strings.TrimSpace(rec[0]), 64)
		tok, err2 := strconv.Atoi(strings.TrimSpace(rec[1]))
		if err1 != nil || err2 != nil {
			if line == 1 {
				continue // a header
			}
			return nil, fmt.Errorf("sim: trace line %d: want seconds and prompt tokens as numbers, got %q, %q", line, rec[0], rec[1])
		}
		if sec < 0 || math.IsNaN(sec) || sec > 366*24*3600 || tok < 1 || tok > 1_000_000 {
			return nil, fmt.Errorf("sim: trace line %d: seconds must be within a year and tokens between 1 and 1,000,000", line)
		}
		a := Arrival{At: time.Duration(sec * float64(time.Second)), Prompt: tok}
		if len(rec) > 2 && strings.TrimSpace(rec[2]) != "" {
			ans, err := strconv.Atoi(strings.TrimSpace(rec[2]))
			if err != nil || ans < 0 || ans > 100_000 {
				if line == 1 {
					continue // a header
				}
				return nil, fmt.Errorf("sim: trace line %d: the answer tokens must be a number from 0 to 100,000, got %q", line, rec[2])
			}
			a.Answer = ans
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, errors.New("sim: the trace has no arrivals")
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At < out[j].At })
	return out, nil
}

// WriteTrace writes a trace in the format ReadTrace reads.
func WriteTrace(w io.Writer, tr []Arrival) error {
	if _, err := io.WriteString(w, "seconds,prompt_tokens,answer_tokens\n"); err != nil {
		return err
	}
	for _, a := range tr {
		if _, err := fmt.Fprintf(w, "%.3f,%d,%d\n", a.At.Seconds(), a.Prompt, a.Answer); err != nil {
			return err
		}
	}
	return nil
}
