package sim_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/sim"
)

func TestZZTmpScenarios(t *testing.T) {
	dir := os.Getenv("SCN")
	if dir == "" {
		t.Skip()
	}
	files, err := sim.ScenarioFiles(strings.Split(dir, ",")...)
	if err != nil {
		t.Fatal(err)
	}
	pass, fail := 0, 0
	for _, f := range files {
		sc, err := sim.LoadScenario(f)
		if err != nil {
			fmt.Println("LOAD", err)
			fail++
			continue
		}
		s, err := sim.NewSession(sc, sim.Options{})
		if err != nil {
			fmt.Println("NEW", err)
			fail++
			continue
		}
		fin, err := s.Run()
		if err != nil {
			fmt.Println("RUN", err)
		}
		tr := s.Trace().Bytes()
		var lines []map[string]any
		sc2 := bufio.NewScanner(bytes.NewReader(tr))
		for sc2.Scan() {
			var m map[string]any
			json.Unmarshal(sc2.Bytes(), &m)
			lines = append(lines, m)
		}
		var problems []string
		if err := sim.CheckSoundTrace(tr); err != nil {
			problems = append(problems, "soundcheck: "+err.Error())
		}
		if sc.Expect == nil {
			problems = append(problems, "no expect")
		} else {
			i := 0
			for _, ev := range sc.Expect.Events {
				found := false
				for ; i < len(lines); i++ {
					ok := true
					for k, v := range ev.Fields {
						if !reflect.DeepEqual(lines[i][k], v) {
							ok = false
							break
						}
					}
					if ok {
						found = true
						i++
						break
					}
				}
				if !found {
					b, _ := json.Marshal(ev.Fields)
					problems = append(problems, fmt.Sprintf("event not found (in order): %s (line %d)", b, ev.Pos.Line))
					break
				}
			}
			// strict: for each mentioned type, all lines of that type in order must match expect entries exactly one-to-one
			types := map[string]bool{}
			for _, ev := range sc.Expect.Events {
				if ty, ok := ev.Fields["type"].(string); ok {
					types[ty] = true
				}
			}
			var filt []map[string]any
			for _, l := range lines {
				if types[l["type"].(string)] {
					filt = append(filt, l)
				}
			}
			if len(filt) != len(sc.Expect.Events) {
				problems = append(problems, fmt.Sprintf("STRICT: %d lines of mentioned types, %d expected events", len(filt), len(sc.Expect.Events)))
			} else {
				for j, ev := range sc.Expect.Events {
					for k, v := range ev.Fields {
						if !reflect.DeepEqual(filt[j][k], v) {
							b, _ := json.Marshal(ev.Fields)
							problems = append(problems, fmt.Sprintf("STRICT: mismatch at %d: %s", j, b))
							break
						}
					}
				}
			}
			if x := sc.Expect.Final; x != nil {
				if x.State != nil && *x.State != string(fin.State) {
					problems = append(problems, fmt.Sprintf("final state %s want %s", fin.State, *x.State))
				}
				if x.Attempt != nil && *x.Attempt != fin.Attempt {
					problems = append(problems, fmt.Sprintf("final attempt %d want %d", fin.Attempt, *x.Attempt))
				}
				if x.IsRetrying != nil && *x.IsRetrying != fin.IsRetrying {
					problems = append(problems, "isRetrying mismatch")
				}
				if x.HasUnresolved && fmt.Sprint(x.UnresolvedPrompts) != fmt.Sprint(fin.UnresolvedPrompts) {
					problems = append(problems, fmt.Sprintf("unresolved %v want %v", fin.UnresolvedPrompts, x.UnresolvedPrompts))
				}
			} else {
				problems = append(problems, "no final")
			}
		}
		if len(problems) == 0 {
			pass++
			fmt.Println("PASS", f)
		} else {
			fail++
			fmt.Println("FAIL", f)
			for _, p := range problems {
				fmt.Println("   ", p)
			}
		}
		if os.Getenv("TRACE") != "" {
			os.Stdout.Write(tr)
		}
	}
	fmt.Printf("%d passed, %d failed\n", pass, fail)
}
