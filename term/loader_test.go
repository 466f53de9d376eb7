package term_test

import (
	"testing"

	"github.com/ohmypi/retryfsm/term"
)

func TestDelaySeconds(t *testing.T) {
	tests := []struct {
		ms   int64
		want int64
	}{
		{0, 0}, {1, 0}, {499, 0}, {500, 1}, {999, 1}, {1000, 1}, {1499, 1}, {1500, 2},
		{2000, 2}, {2500, 3}, {4000, 4}, {8000, 8}, {86_400_000, 86_400},
		{-1, 0}, {-500, 0}, {-501, -1}, {-1500, -1}, {-1501, -2},
	}
	for _, tt := range tests {
		if got := term.DelaySeconds(tt.ms); got != tt.want {
			t.Errorf("DelaySeconds(%d) = %d, want %d", tt.ms, got, tt.want)
		}
	}
}

func TestRetryingText(t *testing.T) {
	tests := []struct {
		attempt, max int
		ms           int64
		want         string
	}{
		{1, 3, 2000, "Retrying (1/3) in 2s\u2026 (esc to cancel)"},
		{2, 3, 4000, "Retrying (2/3) in 4s… (esc to cancel)"},
		{1, 3, 0, "Retrying (1/3) in 0s… (esc to cancel)"},
		{1, 3, 1500, "Retrying (1/3) in 2s… (esc to cancel)"},
		{7, 0, 5000, "Retrying (attempt 7) in 5s… (esc to cancel)"}, // persistent mode
		{1, 3, 1499, "Retrying (1/3) in 1s… (esc to cancel)"},
		{1, 3, 499, "Retrying (1/3) in 0s… (esc to cancel)"},
		{10, 10, 1024000, "Retrying (10/10) in 1024s… (esc to cancel)"},
	}
	for _, tt := range tests {
		if got := term.RetryingText(tt.attempt, tt.max, tt.ms); got != tt.want {
			t.Errorf("RetryingText(%d, %d, %d) = %q, want %q", tt.attempt, tt.max, tt.ms, got, tt.want)
		}
	}
}

func TestRetryFailedText(t *testing.T) {
	tests := []struct {
		attempt int
		final   string
		want    string
	}{
		{3, "529 overloaded_error", "Retry failed after 3 attempts: 529 overloaded_error"},
		{1, "Retry cancelled", "Retry failed after 1 attempts: Retry cancelled"},
		{0, "503 service unavailable", "Retry failed after 0 attempts: 503 service unavailable"},
		{2, "", "Retry failed after 2 attempts: Unknown error"},
	}
	for _, tt := range tests {
		if got := term.RetryFailedText(tt.attempt, tt.final); got != tt.want {
			t.Errorf("RetryFailedText(%d, %q) = %q, want %q", tt.attempt, tt.final, got, tt.want)
		}
	}
}
