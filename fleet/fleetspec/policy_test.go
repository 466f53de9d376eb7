package fleetspec

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// TestConfigKeepsItsPolicy: settings are checked where they are read, by
// compiling them, and the Config keeps that policy: Compile (and Validate,
// and a plan) give it back, checking nothing again, until Settings are
// changed by hand, when they are compiled then. The fleet file's settings
// mapping, a settings file (ReadPolicy, the --settings flag) and
// WithPolicy all keep it.
func TestConfigKeepsItsPolicy(t *testing.T) {
	spec, err := Parse("f.yaml", []byte("sessions: 3\nsettings: {maxRetries: 5, classify: status}\n"))
	if err != nil {
		t.Fatal(err)
	}
	kept := spec.Config.pol
	if kept == nil || kept.Settings().MaxRetries != 5 {
		t.Fatalf("the file's settings were not kept compiled: %v", kept)
	}
	for range 2 {
		if p, err := spec.Config.Compile(); err != nil || p != kept {
			t.Fatalf("Compile = %p, %v; want the reader's %p", p, err, kept)
		}
	}

	s := *spec.Config.Settings
	s.MaxRetries = 6
	spec.Config.Settings = &s // by hand
	if p, err := spec.Config.Compile(); err != nil || p == kept || p.Settings().MaxRetries != 6 {
		t.Errorf("settings changed by hand: Compile = %v, %v; want them compiled anew (6)", p, err)
	}
	s.MaxRetries = -1
	if _, err := spec.Config.Compile(); err == nil {
		t.Error("invalid settings by hand: Compile succeeded")
	}

	path := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(path, []byte(`{"maxRetries": 7}`), 0o644); err != nil {
		t.Fatal(err)
	}
	read, err := ReadPolicy(path)
	if err != nil {
		t.Fatal(err)
	}
	c := Default(1).WithPolicy(read)
	if p, err := c.Compile(); err != nil || p != read || c.Settings.MaxRetries != 7 {
		t.Errorf("WithPolicy: Compile = %p, %v (maxRetries %d); want the file's %p", p, err, c.Settings.MaxRetries, read)
	}
	spec = NewSpec(Default(1))
	fs := flag.NewFlagSet("fleet", flag.ContinueOnError)
	o := NewOverlay(fs)
	if err := fs.Parse([]string{"--settings", path}); err != nil {
		t.Fatal(err)
	}
	if err := o.Apply(spec); err != nil {
		t.Fatal(err)
	}
	if spec.Config.pol == nil || spec.Config.Settings.MaxRetries != 7 {
		t.Errorf("--settings: kept %v, settings %+v; want the file's, compiled", spec.Config.pol, spec.Config.Settings)
	}
	if p, err := spec.Config.Compile(); err != nil || p != spec.Config.pol {
		t.Errorf("--settings: Compile = %p, %v; want the file's %p", p, err, spec.Config.pol)
	}
}
