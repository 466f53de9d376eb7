package policy

import (
	"fmt"
	"strings"
	"time"
)

// Profile is a named bundle of retry settings reproducing another agent's
// or SDK's policy (SPEC.md, "Profiles"). A scenario's or a command's own
// settings merge key by key over its profile's.
type Profile struct {
	// Name is the profile's name, e.g. "omp-2026-06".
	Name string
	// Summary says in one line whose policy it is.
	Summary string
	// Source is where its parameters were read (repository@commit).
	Source string
	// Settings are the profile's retry settings.
	Settings Settings
}

// profiles lists every profile, the default first.
var profiles = []Profile{
	{Name: DefaultProfile, Summary: "oh-my-pi, February 2026 (the original; the default)", Source: "xtxk110/oh-my-pi@63ec7b6",
		Settings: DefaultSettings()},
	{Name: "omp-2026-06", Summary: "oh-my-pi, June 2026: 10 retries from 500 ms, 8 s cap, 25 % downward jitter, hints as a floor, 5-minute fail-fast",
		Source: "xtxk110/oh-my-pi@ca9f2847e",
		Settings: Settings{Enabled: true, MaxRetries: 10, BaseDelay: 500 * time.Millisecond, MaxBackoff: 8 * time.Second,
			Jitter:     Jitter{Mode: JitterDown, Ratio: 0.25},
			RetryAfter: RetryAfter{Use: HintFloor, MaxWait: 300 * time.Second}}},
	{Name: "pi", Summary: "pi (pi-mono v0.58.3): 3 retries from 2 s, no cap, no jitter, hints unused", Source: "badlogic/pi-mono@83378aad",
		Settings: Settings{Enabled: true, MaxRetries: 3, BaseDelay: 2 * time.Second}},
	{Name: "codex", Summary: "Codex CLI turn loop: 5 retries from 200 ms, ±10 % jitter, an in-stream hint replaces the backoff",
		Source: "openai/codex@0a7fb0d7",
		Settings: Settings{Enabled: true, MaxRetries: 5, BaseDelay: 200 * time.Millisecond,
			Jitter: Jitter{Mode: JitterUpDown, Ratio: 0.1}, RetryAfter: RetryAfter{Use: HintReplace}}},
	{Name: "gemini-cli", Summary: "Gemini CLI: 9 retries from 5 s, 30 s cap, ±30 % jitter, hints as a floor, over 300 s terminal",
		Source: "google-gemini/gemini-cli@5411f113",
		Settings: Settings{Enabled: true, MaxRetries: 9, BaseDelay: 5 * time.Second, MaxBackoff: 30 * time.Second,
			Jitter:     Jitter{Mode: JitterUpDown, Ratio: 0.3},
			RetryAfter: RetryAfter{Use: HintFloor, MaxWait: 300 * time.Second}, Classify: ClassifyStatus}},
	{Name: "opencode", Summary: "opencode v1.18: 5 retries from 2 s, 30 s cap, no jitter, hints replace the backoff",
		Source: "anomalyco/opencode@0266548a",
		Settings: Settings{Enabled: true, MaxRetries: 5, BaseDelay: 2 * time.Second, MaxBackoff: 30 * time.Second,
			RetryAfter: RetryAfter{Use: HintReplace}}},
	{Name: "aider", Summary: "Aider: 8 retries from 250 ms (doubling to 32 s), no jitter, hints ignored", Source: "Aider-AI/aider@5dc9490b",
		Settings: Settings{Enabled: true, MaxRetries: 8, BaseDelay: 250 * time.Millisecond}},
	{Name: "anthropic-sdk", Summary: "Anthropic TypeScript SDK: 2 retries from 500 ms, 8 s cap, 25 % downward jitter, hints replace (no bound)",
		Source: "anthropics/anthropic-sdk-typescript@bfa9197f",
		Settings: Settings{Enabled: true, MaxRetries: 2, BaseDelay: 500 * time.Millisecond, MaxBackoff: 8 * time.Second,
			Jitter: Jitter{Mode: JitterDown, Ratio: 0.25}, RetryAfter: RetryAfter{Use: HintReplace}, Classify: ClassifyStatus}},
	{Name: "openai-sdk", Summary: "OpenAI Node SDK: 2 retries from 500 ms, 8 s cap, 25 % downward jitter, hints up to 60 s replace",
		Source: "openai/openai-node@7b7d6ca7",
		Settings: Settings{Enabled: true, MaxRetries: 2, BaseDelay: 500 * time.Millisecond, MaxBackoff: 8 * time.Second,
			Jitter:     Jitter{Mode: JitterDown, Ratio: 0.25},
			RetryAfter: RetryAfter{Use: HintReplace, MaxHint: 60 * time.Second}, Classify: ClassifyStatus}},
}

// Profiles returns every profile, the default first (copies).
func Profiles() []Profile {
	out := make([]Profile, len(profiles))
	for i, p := range profiles {
		p.Settings = p.Settings.Clone()
		out[i] = p
	}
	return out
}

// ProfileByName returns the profile called name ("" is the default).
func ProfileByName(name string) (Profile, error) {
	if name == "" {
		name = DefaultProfile
	}
	for _, p := range profiles {
		if p.Name == name {
			p.Settings = p.Settings.Clone()
			return p, nil
		}
	}
	return Profile{}, fmt.Errorf("unknown profile %q (allowed: %s)", name, strings.Join(profileNames(), ", "))
}

// profileNames lists the profiles' names, the default first.
func profileNames() []string {
	names := make([]string, len(profiles))
	for i, p := range profiles {
		names[i] = p.Name
	}
	return names
}
