package search

import (
	"strings"
	"testing"
)

// terms runs s through the scanner and term, as Open and Search do.
func terms(s string) []string {
	var out []string
	sc := scanner{s: s}
	for sc.next() {
		if t := term(sc.tok); t != nil {
			out = append(out, string(t))
		}
	}
	return out
}

func TestTerms(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"Hello, World!", "world"},
		{"The QUICK brown foxes", "quick brown fox"},
		{"Crème Brûlée à Zürich", "creme brule zurich"},
		{"Cafe\u0301 Zu\u0308rich", "cafe zurich"}, // decomposed accents
		{"Straße Œuvre Æsir þorn Łódź", "strass oeuvr aesir thorn lodz"},
		{"don't users' user's", "user user"},
		{"3,000 requests a day, 1.5 s", "3000 request dai 1.5"},
		{"e-mail sign-in", "e mail sign"},
		{"ノートを作成", "ノ ー ト を 作 成"},
		{"Привет МИР", "привет мир"},
		{"snake_case ünïcödé", "snake case unicod"},
		{"bad \xff\xfe bytes", "bad byte"},
		{strings.Repeat("a", 65) + " fine", "fine"}, // over maxToken: skipped
		{"caches cached caching cache", "cach cach cach cach"},
		{"limits limited limiting", "limit limit limit"},
		{"policies policy", "polici polici"},
		{"rate rated rating rates", "rate rate rate rate"},
		{"running hopped agreed", "run hop agre"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := strings.Join(terms(tt.in), " "); got != tt.want {
				t.Errorf("terms(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestScannerOffsets(t *testing.T) {
	s := "Hi, Zürich's café!"
	var got []string
	sc := scanner{s: s}
	for sc.next() {
		got = append(got, s[sc.start:sc.end])
	}
	if want := "Hi|Zürich's|café"; strings.Join(got, "|") != want {
		t.Errorf("surface forms = %q, want %q", strings.Join(got, "|"), want)
	}
}

func TestStem(t *testing.T) {
	tests := []struct{ in, want string }{
		{"caresses", "caress"}, {"ponies", "poni"}, {"cats", "cat"}, {"feed", "feed"},
		{"agreed", "agre"}, {"plastered", "plaster"}, {"motoring", "motor"}, {"sing", "sing"},
		{"conflated", "conflat"}, {"troubled", "troubl"}, {"sized", "size"}, {"hopping", "hop"},
		{"falling", "fall"}, {"filing", "file"}, {"happy", "happi"}, {"sky", "sky"},
		{"controll", "control"}, {"is", "is"}, {"ab", "ab"}, {"naïve", "naïve"}, {"x2s", "x2s"},
	}
	for _, tt := range tests {
		if got := string(stem([]byte(tt.in))); got != tt.want {
			t.Errorf("stem(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFoldTables(t *testing.T) {
	if len(latin1) != 64 || len(latinA) != 128 {
		t.Fatalf("fold tables have %d and %d entries, want 64 and 128", len(latin1), len(latinA))
	}
	for r, want := range map[rune]string{'À': "a", 'ÿ': "y", '×': "", 'Ā': "a", 'ž': "z", 'ſ': "s", 'Ő': "o", 'ğ': "g", 'ı': "i", 'ł': "l", 'ŋ': "n", 'ų': "u"} {
		if got := foldLatin(r); got != want {
			t.Errorf("foldLatin(%q) = %q, want %q", r, got, want)
		}
	}
}
