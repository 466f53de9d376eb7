package fleetspec

import (
	"flag"
	"os"
	"strings"
	"testing"
)

// specKeyTable is SPEC.md §15.3's table of a fleet file's keys, as the key
// table declares them: a row per key, its flags (each with its value's
// placeholder, as --help writes it), what is allowed and the default.
func specKeyTable() string {
	var b strings.Builder
	b.WriteString("| key | flag | value | default (file) |\n| --- | --- | --- | --- |\n")
	for _, k := range fileKeys {
		cell := "`" + k.name + "`"
		if k.shape != "" {
			cell += " `" + k.shape + "`"
		}
		var flags []string
		for _, f := range k.flags {
			s := "`--" + f.name
			if arg, _ := flag.UnquoteUsage(&flag.Flag{Usage: f.usage, Value: &listValue{}}); arg != "value" {
				s += " " + arg
			}
			s += "`"
			if f.repeat {
				s += " (repeatable)"
			}
			flags = append(flags, s)
		}
		b.WriteString("| " + cell + " | " + strings.Join(flags, ", ") + " | " + k.value + " | " + k.def + " |\n")
	}
	return b.String()
}

// TestSpecKeyTable: SPEC.md's table of a fleet file's keys is the key
// table's (one row per key, in order).
func TestSpecKeyTable(t *testing.T) {
	data, err := os.ReadFile("../../SPEC.md")
	if err != nil {
		t.Fatal(err)
	}
	want := specKeyTable()
	head, _, _ := strings.Cut(want, "\n")
	_, rest, ok := strings.Cut(string(data), "\n"+head+"\n")
	if !ok {
		t.Fatalf("SPEC.md has no table headed %q; the key table's is:\n%s", head, want)
	}
	got, _, _ := strings.Cut(head+"\n"+rest, "\n\n")
	if got+"\n" != want {
		t.Errorf("SPEC.md §15.3's table differs from the key table (fleet/keys.go); the key table's is:\n%s", want)
	}
}

// TestOverlayFlags: every key but name and description has a flag, every
// flag's help names its key, and a flag given sets its key over a file's.
func TestOverlayFlags(t *testing.T) {
	for _, k := range fileKeys {
		if len(k.flags) == 0 && k.name != "name" && k.name != "description" {
			t.Errorf("key %s has no flag", k.name)
		}
		for _, f := range k.flags {
			if !strings.Contains(f.usage, "(key "+k.name) && !strings.Contains(f.usage, "(keys "+k.name) {
				t.Errorf("flag --%s: its help does not name key %s: %q", f.name, k.name, f.usage)
			}
		}
	}
	spec, err := Parse("f.yaml", []byte("sessions: 5\nrecovery: 5s\ncompaction: {enabled: false}\nseeds: 1-3\n"))
	if err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("fleet", flag.ContinueOnError)
	o := NewOverlay(fs)
	if err := fs.Parse([]string{"--recovery", "7s", "--compaction", "fail", "--outage", "1s,2s,529", "--outage", "5s,1s,503", "--seed", "4"}); err != nil {
		t.Fatal(err)
	}
	if err := o.Apply(spec); err != nil {
		t.Fatal(err)
	}
	c := spec.Config
	if c.Sessions != 5 || c.Recovery != 7e9 || c.Compaction != (Compaction{Enabled: true}) || len(c.Outages) != 2 ||
		c.Outages[1].Kind != Kind503 || c.Seed != 4 || spec.SeedFrom != 4 || spec.SeedTo != 4 {
		t.Errorf("after the overlay: %+v", spec)
	}
	fs = flag.NewFlagSet("fleet", flag.ContinueOnError)
	o = NewOverlay(fs)
	if err := fs.Parse([]string{"--seeds", "2-4", "--seed", "9", "--think", "uniform:x"}); err != nil {
		t.Fatal(err)
	}
	if err := o.Apply(spec); err == nil || !strings.HasPrefix(err.Error(), "--think: ") {
		t.Errorf("a bad --think: %v", err)
	}
}
