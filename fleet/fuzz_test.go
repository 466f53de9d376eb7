package fleet_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/fleet"
)

// FuzzParseFleet: whatever the text, Parse never panics; it either gives a
// fleet that validates, with a mix and a range of seeds, or a *FileError that names the file and
// says what is wrong in one line.
func FuzzParseFleet(f *testing.F) {
	for _, name := range []string{"../fleets/outage-529.yaml", "../fleets/rate-limited.yaml", "../fleets/quota-window.yaml"} {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(string(b))
		}
	}
	for _, s := range []string{"", "sessions: 1\n", "{sessions: 0}", "sessions: 1\noutages: [{start: 1s, duration: 1s, kind: 999}]\n",
		"sessions: 1\nprofile: \"a=50%,b=50%\"\n", "- 1\n- 2\n", "sessions: &a 1\nrate: *a\n", "sessions: 1\nthink: exp:-1s\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		spec, err := fleet.Parse("f.yaml", []byte(text))
		if err != nil {
			var fe *fleet.FileError
			if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), "f.yaml") || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error %T %q: want a one-line *FileError naming the file", err, err)
			}
			return
		}
		if spec == nil || len(spec.Mixes) == 0 || spec.SeedFrom > spec.SeedTo {
			t.Fatalf("spec %+v without an error", spec)
		}
		if err := spec.Config.Validate(); err != nil {
			t.Fatalf("parsed, but its fleet does not validate: %v", err)
		}
	})
}
