package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/ohmypi/retryfsm/fleet"
	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"github.com/ohmypi/retryfsm/internal/termsafe"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/tune"
)

func init() {
	register(&command{
		name:  "tune",
		args:  "FLEET_FILE | merge REPORT...",
		short: "find the retry settings a fleet should use: the Pareto front of the settings, the profiles placed against it",
		long: `Searches the retry settings on the fleet of FLEET_FILE (SPEC.md §15.11) and
prints the Pareto front of the objectives, every named profile placed
against it, and the point it chooses. The fleet runs its first profile
mix, every share with the candidate's settings (as its settings key
does), from its first seed on; each profile runs it alone. The axes (--axes, each with a
default range) are ` + strings.Join(tune.AxisNames(), ", ") + `;
the objectives (--objectives, all minimized) ` + strings.Join(tune.ObjectiveNames(), ", ") + `.

The search: every point of the design (the product of the axes' values)
runs short, on the fleet scaled down by --scale (sessions, arrival rate
and capacity alike) with its first seed; the midpoints between each point
of the short runs' front and its neighbours on each numeric axis are
added and run short too; the first Pareto layers of the short runs, a
--keep share of them, run in full over --seeds seeds, as does every named
profile. A point is on the front when no confirmed point's worst case
over the seeds dominates its own worst case. The table gives each
objective's worst case and, in brackets, its best over the seeds. The
chosen point (marked *) is the front's least sum of its objectives, each
scaled to 0 (the front's best) to 1 (its worst). Every run is a fleet run
('retrysim fleet'), on every processor; the output does not depend on
their number.

--out FILE writes the chosen point's retry settings as a settings file
(JSON): 'retrysim fleet --settings FILE' runs it, a fleet file's settings
key takes the same keys, 'retrysim rpc --settings FILE' starts a session
with it, and Go code reads it with json.Unmarshal into a
policy.Settings, compiled by policy.Compile for retryfsm.Do. --json prints the whole report (every
candidate, its values per seed). --plot FILE.png (or .svg) draws the
candidates, the front and the profiles with the command retrysim-plot, as
'retrysim fleet --plot' does.

A tune larger than one machine runs in shards: --shard I/N --json runs
the design's points k with k mod N = I (and the profiles alike) and
prints its report; 'retrysim tune merge REPORT...' puts the shards'
reports together (every shard once) and prints the tune's. Each shard
prunes and refines its own points, so a split tune may confirm more
points than a whole one; every front point is confirmed in full either
way. --shard index/N reads I from the batch engine as 'retrysim fleet'
does.

When stderr is a terminal and the tune runs for more than a second, a
progress bar of the sessions run shows there.

Exit status: 0 when the tune ran, 1 when the output, the settings file or
the chart could not be written, 2 on invalid flags, arguments or files.`,
		options: func(fs *flag.FlagSet) runner {
			o := &tuneOptions{fs: fs}
			fs.StringVar(&o.axes, "axes", "", "search the axes `SPEC`: NAME or NAME=V,V,... separated by ';' (the others keep the base's values; default: every axis, its default values)")
			fs.StringVar(&o.objectives, "objectives", "", "minimize the objectives `LIST`, comma-separated (default: "+strings.Join(tune.DefaultObjectives(), ",")+")")
			fs.IntVar(&o.seeds, "seeds", tune.DefaultSeeds, "run each confirmed point and profile over `N` seeds, from the fleet's seed on")
			fs.Float64Var(&o.scale, "scale", tune.DefaultScale, "a short run's size: the fleet's sessions, rate and capacity times `F` (1: full)")
			o.keep = keepFlag(tune.DefaultKeep)
			fs.Var(&o.keep, "keep", "confirm the share `F` of the short runs' points, their first Pareto layers (1: all)")
			fs.BoolVar(&o.noRefine, "no-refine", false, "leave out the refinement around the short runs' front")
			fs.StringVar(&o.base, "base", "", "start every point from profile `NAME`'s settings (its classification, the settings no axis varies; default: "+policy.DefaultProfile+")")
			fs.BoolVar(&o.json, "json", false, "print the report as JSON")
			fs.Var(&o.out, "out", "write the chosen point's retry settings to `FILE` (JSON)")
			fs.Var(&o.plot, "plot", "also draw the report to `FILE` (.png or .svg), with the command retrysim-plot")
			fs.Var(&o.shard, "shard", "run shard `I/N` of the tune and print its report for 'retrysim tune merge'; needs --json")
			return o
		},
	})
}

// tuneOptions are tune's flags.
type tuneOptions struct {
	fs                     *flag.FlagSet
	axes, objectives, base string
	seeds                  int
	scale                  float64
	keep                   keepFlag
	noRefine, json         bool
	out, plot, shard       givenString
}

func (o *tuneOptions) run(args []string, stdout, stderr io.Writer) int {
	c := lookup("tune")
	if len(args) > 0 && args[0] == "merge" {
		return o.runMerge(c, args[1:], stdout, stderr)
	}
	if len(args) != 1 {
		return usageError(c, stderr, "give one fleet file (got %d arguments)", len(args))
	}
	// Options take 0 for a default: a 0 given here is refused, not defaulted.
	switch {
	case o.seeds < 1 || o.seeds > tune.MaxSeeds:
		return usageError(c, stderr, "--seeds %d (allowed: 1 to %d)", o.seeds, tune.MaxSeeds)
	case !(o.scale > 0 && o.scale <= 1):
		return usageError(c, stderr, "--scale %v (allowed: above 0, at most 1)", o.scale)
	case !(o.keep > 0 && o.keep <= 1):
		return usageError(c, stderr, "--keep %v (allowed: a share above 0, at most 1)", float64(o.keep))
	}
	opt := tune.Options{Seeds: o.seeds, Scale: o.scale, Keep: float64(o.keep), NoRefine: o.noRefine}
	if o.shard.given {
		sh, err := parseShardFlag(o.shard.v)
		if err != nil {
			return usageError(c, stderr, "--shard: %v", err)
		}
		if !o.json || o.out.given || o.plot.given {
			return usageError(c, stderr, "--shard prints a shard's report as JSON for 'retrysim tune merge': give --json, and --out and --plot to merge")
		}
		opt.Shard = sh
	}
	var err error
	if o.axes != "" {
		if opt.Axes, err = tune.ParseAxes(o.axes); err != nil {
			return usageError(c, stderr, "--axes: %v", err)
		}
	}
	if o.objectives != "" {
		if opt.Objectives, err = tune.ParseObjectives(o.objectives); err != nil {
			return usageError(c, stderr, "--objectives: %v", err)
		}
	}
	if o.base != "" {
		p, err := policy.ProfileByName(o.base)
		if err != nil {
			return usageError(c, stderr, "--base: %v", err)
		}
		opt.Base = &p.Settings
	}
	spec, err := fleetspec.Load(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "retrysim tune: %s\n", termsafe.Text(err.Error()))
		return exitUsage
	}
	cfg := spec.Config
	cfg.Profiles, cfg.Seed = spec.Mixes[0], spec.SeedFrom
	if !o.checkOut(c, stderr) {
		return exitUsage
	}
	tu, err := tune.New(cfg, opt)
	if err != nil {
		return usageError(c, stderr, "%s: %v", termsafe.Text(args[0]), err)
	}
	plot, ok := (&fleetOptions{plot: o.plot}).preparePlot(c, stderr)
	if !ok {
		return exitUsage
	}
	prog := startProgress(stderr, tu.Sessions())
	opt.Progress = &prog.done
	tu, _ = tune.New(cfg, opt) // the same tune, counting its sessions
	r, err := tu.Run(context.Background())
	prog.stop()
	if err != nil {
		plot.discard()
		fmt.Fprintf(stderr, "retrysim tune: %v\n", err)
		return exitFail
	}
	return o.finish(r, plot, stdout, stderr)
}

// checkOut checks --out before the run: a file in an existing directory.
func (o *tuneOptions) checkOut(c *command, stderr io.Writer) bool {
	return (&fleetOptions{out: o.out}).checkOut(c, stderr)
}

// finish prints the report, writes the settings file and draws the chart.
func (o *tuneOptions) finish(r *tune.Report, plot *plotTarget, stdout, stderr io.Writer) int {
	data, err := r.JSON()
	if err != nil {
		plot.discard()
		fmt.Fprintf(stderr, "retrysim tune: %v\n", err)
		return exitFail
	}
	out := data
	if !o.json {
		out = tuneTable(r, o.out.v)
	}
	code := exitOK
	if _, err := stdout.Write(out); err != nil {
		fmt.Fprintf(stderr, "retrysim tune: %v\n", err)
		code = exitFail
	}
	if o.out.given {
		if err := writeSettings(r, o.out.v); err != nil {
			fmt.Fprintf(stderr, "retrysim tune: --out: %v\n", err)
			code = exitFail
		}
	}
	if plot != nil {
		plot.args = []string{"-tune"}
		if err := plot.draw(data, stderr); err != nil {
			fmt.Fprintf(stderr, "retrysim tune: %v\n", err)
			code = exitFail
		}
	}
	return code
}

// writeSettings writes the chosen point's settings to path, as JSON.
func writeSettings(r *tune.Report, path string) error {
	s, ok := r.ChosenSettings()
	if !ok {
		return fmt.Errorf("no point chosen (the front is empty): %s not written", path)
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(data, '\n'), 0o644)
}

// runMerge runs "retrysim tune merge REPORT...".
func (o *tuneOptions) runMerge(c *command, paths []string, stdout, stderr io.Writer) int {
	var others []string
	o.fs.Visit(func(f *flag.Flag) {
		if f.Name != "json" && f.Name != "plot" && f.Name != "out" {
			others = append(others, "--"+f.Name)
		}
	})
	if len(others) > 0 {
		return usageError(c, stderr, "merge: %s: not a flag of merge (merge takes --json, --out and --plot; the reports hold their tune)", strings.Join(others, ", "))
	}
	if len(paths) == 0 {
		return usageError(c, stderr, "merge: no reports (give the files 'retrysim tune --shard I/N --json' wrote, one per shard)")
	}
	if !o.checkOut(c, stderr) {
		return exitUsage
	}
	paths, err := partialPaths(paths)
	if err != nil {
		fmt.Fprintf(stderr, "retrysim tune merge: %s\n", termsafe.Text(err.Error()))
		return exitUsage
	}
	parts := make([]*tune.Report, len(paths))
	for i, path := range paths {
		if parts[i], err = tune.ReadReportFile(path); err != nil {
			fmt.Fprintf(stderr, "retrysim tune merge: %s: %s\n", termsafe.Text(path), termsafe.Text(err.Error()))
			return exitUsage
		}
	}
	r, err := tune.Merge(parts, paths)
	if err != nil {
		fmt.Fprintf(stderr, "retrysim tune merge: %s\n", termsafe.Text(err.Error()))
		return exitUsage
	}
	plot, ok := (&fleetOptions{plot: o.plot}).preparePlot(c, stderr)
	if !ok {
		return exitUsage
	}
	return o.finish(r, plot, stdout, stderr)
}

// tuneTable writes the report as text: what ran, the front (a row per
// point: its axes' values, each objective's worst case [best], the
// profiles that dominate it), the profiles placed, the chosen point.
func tuneTable(r *tune.Report, out string) []byte {
	var b bytes.Buffer
	c := r.Counts
	seeds := fleet.SeedsText(r.Seeds)
	fmt.Fprintf(&b, "tune %s  design %d points (%d invalid left out)  short runs %d (%d refined; %s of the fleet, seed %d)  confirmed %d over seeds %s\n",
		r.Fleet, c.Design, c.Invalid, c.ShortRuns, c.Refined, strconv.FormatFloat(r.Scale, 'f', -1, 64), r.Seeds[0], c.Confirmed, seeds)
	fmt.Fprintf(&b, "objectives (minimized; the worst over the seeds, [the best]): %s\n\n", strings.Join(r.Objectives, ", "))
	cell := func(name string, worst, best float64) string {
		return tune.ObjectiveText(name, worst) + " [" + tune.ObjectiveText(name, best) + "]"
	}
	fmt.Fprintf(&b, "front: %d points (\"#N +K\": K more points alike on every objective and seed, their values joined by |)\n", len(r.Front))
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	head := []string{"#"}
	for _, a := range r.Axes {
		head = append(head, a.Name)
	}
	for _, name := range r.Objectives {
		head = append(head, strings.ToUpper(name))
	}
	head = append(head, "DOMINATED_BY_PROFILES")
	fmt.Fprintln(w, strings.Join(head, "\t"))
	for _, group := range r.Alike() {
		cd := &r.Candidates[group[0]-1]
		mark := strconv.Itoa(group[0])
		if slices.Contains(group, r.Chosen) {
			mark = strconv.Itoa(r.Chosen) + "*"
		}
		if len(group) > 1 {
			mark += " +" + strconv.Itoa(len(group)-1)
		}
		row := []string{mark}
		for a := range r.Axes {
			var vals []string
			for _, id := range group {
				if v := r.Candidates[id-1].Values[a]; !slices.Contains(vals, v) {
					vals = append(vals, v)
				}
			}
			row = append(row, strings.Join(vals, "|"))
		}
		for i, name := range r.Objectives {
			row = append(row, cell(name, cd.Worst[i], cd.Best[i]))
		}
		row = append(row, listOrNone(cd.DominatedBy))
		fmt.Fprintln(w, strings.Join(row, "\t"))
	}
	w.Flush()
	fmt.Fprintf(&b, "\nprofiles against the front\n")
	w = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	head = []string{"PROFILE"}
	for _, name := range r.Objectives {
		head = append(head, strings.ToUpper(name))
	}
	head = append(head, "PLACE")
	fmt.Fprintln(w, strings.Join(head, "\t"))
	for _, p := range r.Profiles {
		row := []string{p.Profile}
		if p.Error != "" {
			for range r.Objectives {
				row = append(row, "-")
			}
			fmt.Fprintln(w, strings.Join(append(row, "not run: "+termsafe.Text(p.Error)), "\t"))
			continue
		}
		for i, name := range r.Objectives {
			row = append(row, cell(name, p.Worst[i], p.Best[i]))
		}
		place := "on the front (no point dominates it)"
		if !p.OnFront {
			ids := make([]string, len(p.DominatedBy))
			for i, id := range p.DominatedBy {
				ids[i] = "#" + strconv.Itoa(id)
			}
			place = "dominated by " + strings.Join(ids, " ")
		}
		fmt.Fprintln(w, strings.Join(append(row, place), "\t"))
	}
	w.Flush()
	if s, ok := r.ChosenSettings(); ok {
		data, _ := json.Marshal(s)
		fmt.Fprintf(&b, "\nchosen: #%d %s", r.Chosen, data)
		if out != "" {
			fmt.Fprintf(&b, " (written to %s)", termsafe.Text(out))
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "-"
	}
	return strings.Join(l, " ")
}

// keepFlag is --keep: a share, its default written 1/3.
type keepFlag float64

func (f *keepFlag) String() string {
	if f == nil || float64(*f) == tune.DefaultKeep {
		return "1/3"
	}
	return strconv.FormatFloat(float64(*f), 'g', -1, 64)
}

func (f *keepFlag) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("%q is not a number (allowed: a share above 0, at most 1)", s)
	}
	*f = keepFlag(v)
	return nil
}
