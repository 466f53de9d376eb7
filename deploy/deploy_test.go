// Package deploy holds the container image (Dockerfile) and the Kubernetes
// Jobs (fleet-shards.yaml, fleet-merge.yaml) that run a fleet sweep larger
// than one machine; it has no Go code but its test, which plays the Jobs'
// contract locally (SPEC.md §15.6).
package deploy

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"
	"gopkg.in/yaml.v3"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// manifest is the part of a Kubernetes object the Jobs use: a Job or a
// PersistentVolumeClaim (one spec type for both, so that the YAML decodes
// strictly: a key outside these, a misspelt one, is an error).
type manifest struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		// PersistentVolumeClaim
		AccessModes []string  `yaml:"accessModes"`
		Resources   resources `yaml:"resources"`
		// Job
		CompletionMode   string `yaml:"completionMode"`
		Completions      *int   `yaml:"completions"`
		Parallelism      *int   `yaml:"parallelism"`
		BackoffLimit     *int   `yaml:"backoffLimit"`
		PodFailurePolicy struct {
			Rules []struct {
				Action      string `yaml:"action"`
				OnExitCodes struct {
					ContainerName string `yaml:"containerName"`
					Operator      string `yaml:"operator"`
					Values        []int  `yaml:"values"`
				} `yaml:"onExitCodes"`
			} `yaml:"rules"`
		} `yaml:"podFailurePolicy"`
		Template struct {
			Spec struct {
				RestartPolicy   string `yaml:"restartPolicy"`
				SecurityContext struct {
					RunAsNonRoot bool  `yaml:"runAsNonRoot"`
					RunAsUser    int64 `yaml:"runAsUser"`
					RunAsGroup   int64 `yaml:"runAsGroup"`
					FSGroup      int64 `yaml:"fsGroup"`
				} `yaml:"securityContext"`
				Containers []container `yaml:"containers"`
				Volumes    []struct {
					Name                  string `yaml:"name"`
					PersistentVolumeClaim struct {
						ClaimName string `yaml:"claimName"`
					} `yaml:"persistentVolumeClaim"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type resources struct {
	Requests map[string]string `yaml:"requests"`
	Limits   map[string]string `yaml:"limits"`
}

type container struct {
	Name            string   `yaml:"name"`
	Image           string   `yaml:"image"`
	ImagePullPolicy string   `yaml:"imagePullPolicy"`
	Command         []string `yaml:"command"`
	Args            []string `yaml:"args"`
	Env             []struct {
		Name  string `yaml:"name"`
		Value string `yaml:"value"`
	} `yaml:"env"`
	Resources       resources `yaml:"resources"`
	SecurityContext struct {
		AllowPrivilegeEscalation bool `yaml:"allowPrivilegeEscalation"`
		ReadOnlyRootFilesystem   bool `yaml:"readOnlyRootFilesystem"`
		Capabilities             struct {
			Drop []string `yaml:"drop"`
		} `yaml:"capabilities"`
	} `yaml:"securityContext"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
		ReadOnly  bool   `yaml:"readOnly"`
	} `yaml:"volumeMounts"`
}

// readManifests decodes every YAML document of path, strictly.
func readManifests(t *testing.T, path string) []manifest {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var out []manifest
	for {
		var m manifest
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, m)
	}
}

// image is what the Dockerfile's final stage holds: its base, entrypoint,
// the files it copies from the repository or the build stage (path in the
// image -> source), and the build stage's go build command.
type image struct {
	base       string
	entrypoint []string
	copies     map[string]string // image path -> "context:" + repository path, or "build:" + path in the build stage
	goBuild    []string          // the RUN line's words: VAR=value..., go, build, ...
	user       string
}

// readDockerfile reads the Dockerfile's instructions this image uses (one
// instruction a line; no line continuations, no quoting in RUN).
func readDockerfile(t *testing.T, path string) image {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var img image
	stages := 0
	multi := "" // a COPY of several sources in the current stage
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		at := fmt.Sprintf("%s:%d", path, n+1)
		if strings.HasSuffix(line, `\`) {
			t.Fatalf("%s: a line continuation (the test reads one instruction a line)", at)
		}
		word := strings.Fields(line)
		switch strings.ToUpper(word[0]) {
		case "FROM":
			stages++
			img, multi = image{base: word[1], copies: map[string]string{}, goBuild: img.goBuild}, ""
		case "RUN":
			if slices.Contains(word, "go") && slices.Contains(word, "build") {
				if strings.ContainsAny(line, `"'`) {
					t.Fatalf("%s: quotes in the go build line (the test runs its words as they are)", at)
				}
				img.goBuild = word[1:]
			}
		case "COPY":
			args := word[1:]
			from := "context:"
			if f, ok := strings.CutPrefix(args[0], "--from="); ok {
				from, args = f+":", args[1:]
			}
			if len(args) != 2 {
				multi = at
				continue
			}
			img.copies[args[1]] = from + args[0]
		case "ENTRYPOINT":
			if err := json.Unmarshal([]byte(strings.TrimSpace(line[len("ENTRYPOINT"):])), &img.entrypoint); err != nil {
				t.Fatalf("%s: ENTRYPOINT not in exec form: %v", at, err)
			}
		case "USER":
			img.user = word[1]
		}
	}
	if stages != 2 {
		t.Fatalf("%s: %d stages, want 2 (build, then the image)", path, stages)
	}
	if multi != "" {
		t.Fatalf("%s: a COPY of several sources into the image (the test maps one source to one destination)", multi)
	}
	return img
}

// moduleRoot is the repository's root: the Docker build context.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	return root
}

// buildImage builds the image's binary as the Dockerfile's build stage does
// (its go build line, CGO_ENABLED=0 and all, in the build context, the -o
// path moved into dir), checks it is static, and returns the image's
// filesystem as the test maps it: image path -> local path.
func buildImage(t *testing.T, img image, dir string) map[string]string {
	t.Helper()
	root := moduleRoot(t)
	var env []string
	words := img.goBuild
	for len(words) > 0 && strings.Contains(words[0], "=") {
		env, words = append(env, words[0]), words[1:]
	}
	if !slices.Contains(env, "CGO_ENABLED=0") {
		t.Fatalf("the build stage's go build %q does not set CGO_ENABLED=0: the binary would not run on %s", img.goBuild, img.base)
	}
	if len(words) < 2 || words[0] != "go" || words[1] != "build" {
		t.Fatalf("the build stage runs %q, not go build", img.goBuild)
	}
	args := slices.Clone(words[1:])
	o := slices.Index(args, "-o")
	if o < 0 || o+1 == len(args) {
		t.Fatalf("go build %q names no -o file", args)
	}
	built := args[o+1]
	bin := filepath.Join(dir, "retrysim")
	args[o+1] = bin
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %q: %v\n%s", args, err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	libs, _ := f.ImportedLibraries()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatalf("the binary is dynamically linked (an interpreter; libraries %q): it would not run on %s", libs, img.base)
		}
	}
	fsys := map[string]string{}
	for dst, src := range img.copies {
		switch {
		case src == "build:"+built:
			fsys[dst] = bin
		case strings.HasPrefix(src, "context:"):
			fsys[dst] = filepath.Join(root, strings.TrimPrefix(src, "context:"))
		default:
			t.Fatalf("the image copies %s from %s: not the built binary %s", dst, src, built)
		}
	}
	return fsys
}

// expand replaces $(VAR) in s as the kubelet does in a container's command,
// args and env values: with VAR's value when the environment defines it,
// else left as it is; $$ is a $.
func expand(s string, env map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if v, ok := env[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString("$(" + name + ")")
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// pod is one container of a Job's pod as the test runs it: its command
// line, environment and filesystem (image path -> local path: the image's
// files and the volumes mounted).
type pod struct {
	argv []string
	env  []string
	fsys map[string]string
}

// newPod is job's container as Kubernetes starts it in the pod of
// completion index (-1: not an Indexed Job): the image's entrypoint unless
// the container gives a command, then its args; the manifest's env, then
// JOB_COMPLETION_INDEX (the Job controller appends it); $(VAR) expanded;
// each volume at its mount path (volumes: claim name -> local directory).
func newPod(t *testing.T, job manifest, img image, imageFS, volumes map[string]string, index int) pod {
	t.Helper()
	spec := job.Spec.Template.Spec
	if len(spec.Containers) != 1 {
		t.Fatalf("job %s: %d containers, want 1", job.Metadata.Name, len(spec.Containers))
	}
	c := spec.Containers[0]
	env := map[string]string{}
	var envList []string
	add := func(name, value string) {
		env[name] = value
		envList = append(envList, name+"="+value)
	}
	for _, e := range c.Env {
		add(e.Name, expand(e.Value, env))
	}
	if index >= 0 {
		add("JOB_COMPLETION_INDEX", strconv.Itoa(index))
	}
	p := pod{env: envList, fsys: map[string]string{}}
	for k, v := range imageFS {
		p.fsys[k] = v
	}
	for _, m := range c.VolumeMounts {
		claim := ""
		for _, v := range spec.Volumes {
			if v.Name == m.Name {
				claim = v.PersistentVolumeClaim.ClaimName
			}
		}
		local, ok := volumes[claim]
		if !ok {
			t.Fatalf("job %s mounts volume %q: not a claim the manifests declare (%q)", job.Metadata.Name, m.Name, claim)
		}
		p.fsys[m.MountPath] = local
	}
	command := c.Command
	if command == nil {
		command = img.entrypoint
	}
	for _, a := range append(slices.Clone(command), c.Args...) {
		p.argv = append(p.argv, p.local(expand(a, env)))
	}
	return p
}

// local is the local path of an image path (whole, or a --flag=PATH's
// value); any other argument as it is.
func (p pod) local(arg string) string {
	flagName, value := "", arg
	if strings.HasPrefix(arg, "-") {
		if name, v, ok := strings.Cut(arg, "="); ok {
			flagName, value = name+"=", v
		}
	}
	if !strings.HasPrefix(value, "/") {
		return arg
	}
	best := ""
	for dst := range p.fsys {
		if (value == dst || strings.HasPrefix(value, strings.TrimSuffix(dst, "/")+"/")) && len(dst) > len(best) {
			best = dst
		}
	}
	if best == "" {
		return arg // not a file of the pod: left as is, and the run shows it
	}
	return flagName + p.fsys[best] + strings.TrimPrefix(value, best)
}

// run runs the pod's command with its environment only (what the container
// has): its stdout (its log), stderr and exit code.
func (p pod) run(t *testing.T, dir string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(p.argv[0], p.argv[1:]...)
	cmd.Env = p.env
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return out.String(), errOut.String(), exit.ExitCode()
	} else if err != nil {
		t.Fatalf("%q: %v", p.argv, err)
	}
	return out.String(), errOut.String(), 0
}

// withoutFlags is args without the flags named (with their values: the
// next argument, or after '=') and without the boolean flags bools.
func withoutFlags(args []string, valued, bools []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		switch {
		case !strings.HasPrefix(args[i], "-"):
			out = append(out, args[i])
		case slices.Contains(valued, name):
			if !hasValue {
				i++
			}
		case slices.Contains(bools, name):
		default:
			out = append(out, args[i])
		}
	}
	return out
}

// TestIndexedJobPlayedLocally plays deploy/'s contract: the image's binary
// built as the Dockerfile builds it (static, for scratch); the Indexed Job
// of fleet-shards.yaml run once per completion index (in reverse order, and
// one index twice, as a retried pod), each with the environment Kubernetes
// sets (the manifest's env, JOB_COMPLETION_INDEX, $(VAR) expanded in the
// args) and the volume at its mount path; then the merge Job of
// fleet-merge.yaml over the same volume. Its log is byte for byte what the
// whole sweep (the shards' args without --shard, --out and --json, with the
// merge's output flags) prints, and merge --json over the volume is the
// whole sweep's --json.
func TestIndexedJobPlayedLocally(t *testing.T) {
	if testing.Short() {
		t.Skip("builds retrysim as the Dockerfile does (-short skips it)")
	}
	img := readDockerfile(t, "Dockerfile")
	if img.base != "scratch" || img.user == "" || img.user == "root" || img.user == "0" {
		t.Errorf("the image is FROM %s as user %q, want scratch, not root", img.base, img.user)
	}
	shardObjs := readManifests(t, "fleet-shards.yaml")
	mergeObjs := readManifests(t, "fleet-merge.yaml")

	dir := t.TempDir()
	imageFS := buildImage(t, img, dir)
	volumes := map[string]string{}
	var shardJob, mergeJob *manifest
	for _, objs := range [][]manifest{shardObjs, mergeObjs} {
		for i := range objs {
			m := &objs[i]
			switch m.Kind {
			case "PersistentVolumeClaim":
				if m.APIVersion != "v1" || len(m.Spec.AccessModes) == 0 || m.Spec.Resources.Requests["storage"] == "" {
					t.Errorf("claim %s: apiVersion %q, accessModes %q, storage %q", m.Metadata.Name, m.APIVersion, m.Spec.AccessModes, m.Spec.Resources.Requests["storage"])
				}
				volumes[m.Metadata.Name] = filepath.Join(dir, "volume-"+m.Metadata.Name)
				if err := os.Mkdir(volumes[m.Metadata.Name], 0o755); err != nil {
					t.Fatal(err)
				}
			case "Job":
				if m.APIVersion != "batch/v1" || m.Spec.Template.Spec.RestartPolicy != "Never" {
					t.Errorf("job %s: apiVersion %q, restartPolicy %q (want batch/v1, Never: a failed shard is a new pod of the same index)",
						m.Metadata.Name, m.APIVersion, m.Spec.Template.Spec.RestartPolicy)
				}
				if m.Spec.CompletionMode == "Indexed" {
					shardJob = m
				} else {
					mergeJob = m
				}
			default:
				t.Fatalf("%s %s: a kind the test does not play", m.Kind, m.Metadata.Name)
			}
		}
	}
	if shardJob == nil || mergeJob == nil || len(volumes) != 1 {
		t.Fatalf("want an Indexed Job, a merge Job and one claim; got shards %v, merge %v, claims %v", shardJob != nil, mergeJob != nil, volumes)
	}
	n := shardJob.Spec.Completions
	if n == nil || *n < 1 || shardJob.Spec.Parallelism == nil || *shardJob.Spec.Parallelism < 1 || *shardJob.Spec.Parallelism > *n {
		t.Fatalf("job %s: completions %v, parallelism %v (want completions >= 1, parallelism 1 to completions)",
			shardJob.Metadata.Name, n, shardJob.Spec.Parallelism)
	}
	shardImage, mergeImage := shardJob.Spec.Template.Spec.Containers[0].Image, mergeJob.Spec.Template.Spec.Containers[0].Image
	if shardImage != mergeImage {
		t.Errorf("the shards run image %s, the merge %s: one build, or the sweeps' identities (their profiles' settings) may differ", shardImage, mergeImage)
	}
	for _, rule := range shardJob.Spec.PodFailurePolicy.Rules {
		if rule.OnExitCodes.ContainerName != shardJob.Spec.Template.Spec.Containers[0].Name {
			t.Errorf("a pod failure rule names container %q, not the shard's", rule.OnExitCodes.ContainerName)
		}
	}

	// The shards: every completion index once, in reverse order, and index 0
	// again (a retried pod writes its file again).
	volume := volumes[shardJob.Spec.Template.Spec.Volumes[0].PersistentVolumeClaim.ClaimName]
	var shardArgs []string
	for _, index := range append([]int{0}, reverse(*n)...) {
		p := newPod(t, *shardJob, img, imageFS, volumes, index)
		out, errOut, code := p.run(t, dir)
		if code != 0 || errOut != "" {
			t.Fatalf("shard pod %d %q (env %q): exit %d, stderr:\n%s", index, p.argv, p.env, code, errOut)
		}
		if out != "" {
			t.Errorf("shard pod %d logs %d bytes: its partial belongs on the volume", index, len(out))
		}
		shardArgs = p.argv
	}
	entries, err := os.ReadDir(volume)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != *n {
		t.Fatalf("the volume holds %q after %d indexes: want one partial per index", names, *n)
	}

	// The merge, and the whole sweep it must equal.
	mp := newPod(t, *mergeJob, img, imageFS, volumes, -1)
	merged, errOut, code := mp.run(t, dir)
	if code != 0 || errOut != "" {
		t.Fatalf("merge pod %q: exit %d, stderr:\n%s", mp.argv, code, errOut)
	}
	mergeAt := slices.Index(mp.argv, "merge")
	if mergeAt < 0 {
		t.Fatalf("the merge Job runs %q: no merge", mp.argv)
	}
	var outputFlags []string
	for _, a := range mp.argv[mergeAt+1:] {
		if strings.HasPrefix(a, "-") {
			outputFlags = append(outputFlags, a)
		}
	}
	whole := append(withoutFlags(shardArgs, []string{"shard", "out"}, []string{"json"}), outputFlags...)
	wp := pod{argv: whole, env: mp.env}
	want, errOut, code := wp.run(t, dir)
	if code != 0 || errOut != "" {
		t.Fatalf("the whole sweep %q: exit %d, stderr:\n%s", whole, code, errOut)
	}
	if merged != want {
		t.Fatalf("the merge Job's log differs from the whole sweep %q:\n%s\n---\n%s", whole, merged, want)
	}
	if !strings.Contains(merged, "fleet outage-529") {
		t.Errorf("the merged sweep does not show the ready fleets:\n%s", merged)
	}

	jsonMerge := pod{argv: []string{mp.argv[0], "fleet", "merge", "--json", volume}, env: mp.env}
	mergedJSON, errOut, code := jsonMerge.run(t, dir)
	wholeJSON := pod{argv: withoutFlags(shardArgs, []string{"shard", "out"}, nil), env: mp.env}
	wantJSON, errOut2, code2 := wholeJSON.run(t, dir)
	if code != 0 || code2 != 0 || mergedJSON != wantJSON {
		t.Fatalf("merge --json (exit %d, %s) differs from the whole sweep's --json (exit %d, %s):\n%s\n---\n%s",
			code, errOut, code2, errOut2, mergedJSON, wantJSON)
	}
}

// reverse is n-1, ..., 1, 0.
func reverse(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = n - 1 - i
	}
	return out
}
