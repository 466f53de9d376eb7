package suggest

import "testing"

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"run", "run", 0}, {"", "run", 3}, {"run", "", 3},
		{"rnu", "run", 1}, // a swap is one edit
		{"rnu", "rpc", 2}, {"profil", "profile", 1}, {"kitten", "sitting", 3},
		{"ca", "abc", 3}, // optimal string alignment: no edit of a swapped pair
		{"ünï", "nüï", 1},
	}
	for _, tt := range tests {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	names := []string{"maxRetries", "baseDelayMs", "enabled"}
	for _, tc := range []struct{ typed, want string }{
		{"maxRetry", "; did you mean maxRetries?"},
		{"MAXRETRIES", "; did you mean maxRetries?"},
		{"baseDelay", "; did you mean baseDelayMs?"},
		{"frobnicate", ""},
	} {
		if got := DidYouMean(tc.typed, names, ""); got != tc.want {
			t.Errorf("DidYouMean(%q) = %q, want %q", tc.typed, got, tc.want)
		}
	}
}
