// Package deploy holds the container image (Dockerfile) and the Kubernetes
// objects (kustomization.yaml over fleet-shards.yaml and fleet-merge.yaml)
// that run a fleet sweep larger than one machine, and the same sweep as a
// Slurm job array (slurm/); it has no Go code but its tests, which check the
// objects against the API's types and play the Jobs' contract locally
// (SPEC.md §15.9), and run the Slurm scripts on a real one-node cluster
// when asked to (§15.10).
package deploy

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/cmd/retrysim-plot/fleetplot"
	"github.com/ohmypi/retryfsm/fleet"
	"go.uber.org/goleak"
	"gopkg.in/yaml.v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	sigsyaml "sigs.k8s.io/yaml"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// cluster are the Kubernetes objects deploy/ declares, as 'kubectl apply
// -k deploy/' builds them from kustomization.yaml (kustomize's own
// library), each decoded strictly into the API's Go types (k8s.io/api,
// generated from the same definitions as the API server's OpenAPI schema):
// a field the API does not have, a value of the wrong type or a malformed
// quantity is an error naming it.
type cluster struct {
	claims []corev1.PersistentVolumeClaim
	jobs   []batchv1.Job
}

// buildObjects builds the kustomization in dir of fsys and decodes its
// objects (buildObjects errors are what a kubectl apply -k would refuse).
func buildObjects(fsys filesys.FileSystem, dir string) (cluster, error) {
	var c cluster
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fsys, dir)
	if err != nil {
		return c, err
	}
	for _, r := range m.Resources() {
		data, err := r.AsYAML()
		if err != nil {
			return c, err
		}
		at := r.GetKind() + " " + r.GetName()
		switch gvk := r.GetGvk(); {
		case gvk.Group == "" && gvk.Version == "v1" && gvk.Kind == "PersistentVolumeClaim":
			var pvc corev1.PersistentVolumeClaim
			if err := decodeStrict(data, &pvc); err != nil {
				return c, fmt.Errorf("%s: %w", at, err)
			}
			c.claims = append(c.claims, pvc)
		case gvk.Group == "batch" && gvk.Version == "v1" && gvk.Kind == "Job":
			var job batchv1.Job
			if err := decodeStrict(data, &job); err != nil {
				return c, fmt.Errorf("%s: %w", at, err)
			}
			c.jobs = append(c.jobs, job)
		default:
			return c, fmt.Errorf("%s: %s is not an object the sweep uses (a PersistentVolumeClaim v1, a Job batch/v1)", at, gvk)
		}
	}
	return c, nil
}

// decodeStrict decodes the YAML object data into v as the API server
// decodes a request: field names matched case-sensitively, and an unknown
// or repeated field an error naming its path.
func decodeStrict(data []byte, v any) error {
	js, err := sigsyaml.YAMLToJSON(data)
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(js, v, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

// checkOneNode checks what the API's types leave to the API server and the
// cluster: the enumerated values the objects use, and that they bind and
// run on a one-node cluster as written (kind's or minikube's default
// storage class binds ReadWriteOnce only; a pod requests at most one of
// the node's 2 CPUs and 1 GiB); nil when they do.
func (c cluster) checkOneNode() error {
	var errs []error
	for _, pvc := range c.claims {
		if !slices.Equal(pvc.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}) {
			errs = append(errs, fmt.Errorf("claim %s: accessModes %q: kind's and minikube's default storage class binds [ReadWriteOnce] only", pvc.Name, pvc.Spec.AccessModes))
		}
		if pvc.Spec.Resources.Requests.Storage().IsZero() {
			errs = append(errs, fmt.Errorf("claim %s: no storage requested", pvc.Name))
		}
	}
	for _, job := range c.jobs {
		spec := job.Spec.Template.Spec
		if spec.RestartPolicy != corev1.RestartPolicyNever {
			errs = append(errs, fmt.Errorf("job %s: restartPolicy %q, want Never (a failed shard is a new pod of the same index)", job.Name, spec.RestartPolicy))
		}
		if m := job.Spec.CompletionMode; m != nil && *m != batchv1.IndexedCompletion && *m != batchv1.NonIndexedCompletion {
			errs = append(errs, fmt.Errorf("job %s: completionMode %q is not one of Indexed, NonIndexed", job.Name, *m))
		}
		if p := job.Spec.PodFailurePolicy; p != nil {
			for i, rule := range p.Rules {
				if rule.OnExitCodes == nil || (rule.OnExitCodes.Operator != batchv1.PodFailurePolicyOnExitCodesOpIn && rule.OnExitCodes.Operator != batchv1.PodFailurePolicyOnExitCodesOpNotIn) {
					errs = append(errs, fmt.Errorf("job %s: podFailurePolicy.rules[%d]: want onExitCodes with operator In or NotIn", job.Name, i))
				}
			}
		}
		for _, ctr := range spec.Containers {
			if cpu := ctr.Resources.Requests.Cpu(); cpu.Cmp(resource.MustParse("1")) > 0 {
				errs = append(errs, fmt.Errorf("job %s: container %s requests %s CPUs: no pod would schedule on a 2-CPU node beside the system's pods", job.Name, ctr.Name, cpu))
			}
			if mem := ctr.Resources.Requests.Memory(); mem.Cmp(resource.MustParse("1Gi")) > 0 {
				errs = append(errs, fmt.Errorf("job %s: container %s requests %s of memory, over 1Gi", job.Name, ctr.Name, mem))
			}
			if ctr.Image == "" {
				errs = append(errs, fmt.Errorf("job %s: container %s names no image", job.Name, ctr.Name))
			}
		}
		for _, v := range spec.Volumes {
			if v.PersistentVolumeClaim == nil || !slices.ContainsFunc(c.claims, func(p corev1.PersistentVolumeClaim) bool { return p.Name == v.PersistentVolumeClaim.ClaimName }) {
				errs = append(errs, fmt.Errorf("job %s: volume %s is not a claim the objects declare", job.Name, v.Name))
			}
		}
	}
	return errors.Join(errs...)
}

// TestObjectsCheckedAgainstTheAPI: kustomization.yaml builds a claim and
// two Jobs that decode strictly into the API's types, bind and run on a
// one-node cluster, with the image named once (the kustomization's, in
// every container). The same checks refuse a misspelt field, a value of the
// wrong type, a malformed quantity, a ReadWriteMany claim and a pod too big
// for the node.
func TestObjectsCheckedAgainstTheAPI(t *testing.T) {
	objs, err := buildObjects(filesys.MakeFsOnDisk(), ".")
	if err != nil {
		t.Fatal(err)
	}
	if err := objs.checkOneNode(); err != nil {
		t.Error(err)
	}
	if len(objs.claims) != 1 || len(objs.jobs) != 2 {
		t.Fatalf("%d claims and %d jobs, want 1 and 2", len(objs.claims), len(objs.jobs))
	}
	kust, err := os.ReadFile("kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Images []struct {
			NewName string `yaml:"newName"`
			NewTag  string `yaml:"newTag"`
		} `yaml:"images"`
	}
	if err := yaml.Unmarshal(kust, &k); err != nil || len(k.Images) != 1 {
		t.Fatalf("kustomization.yaml: %v, images %+v: want one", err, k.Images)
	}
	want := k.Images[0].NewName + ":" + k.Images[0].NewTag
	for _, job := range objs.jobs {
		for _, ctr := range job.Spec.Template.Spec.Containers {
			if ctr.Image != want {
				t.Errorf("job %s: container %s runs %q, not the kustomization's %q", job.Name, ctr.Name, ctr.Image, want)
			}
		}
	}
	for _, file := range []string{"fleet-shards.yaml", "fleet-merge.yaml"} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(want)) {
			t.Errorf("%s names the image %s: it is written once, in kustomization.yaml", file, want)
		}
	}

	for _, c := range []struct{ file, old, new, want string }{
		{"fleet-shards.yaml", "completions: 4", "completion: 4", `unknown field "spec.completion"`},
		{"fleet-shards.yaml", "parallelism: 4", "parallelism: four", "parallelism"},
		{"fleet-shards.yaml", "storage: 1Gi", "storage: 1 gigabyte", "quantities must match"},
		{"fleet-shards.yaml", "accessModes: [ReadWriteOnce]", "accessModes: [ReadWriteMany]", "binds [ReadWriteOnce] only"},
		{"fleet-shards.yaml", "cpu: 500m", "cpu: \"2\"", "requests 2 CPUs"},
		{"fleet-merge.yaml", "readOnly: true", "readonly: true", `unknown field "spec.template.spec.containers[0].volumeMounts[0].readonly"`},
	} {
		fsys := filesys.MakeFsInMemory()
		for _, name := range []string{"kustomization.yaml", "fleet-shards.yaml", "fleet-merge.yaml"} {
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if name == c.file {
				if !bytes.Contains(data, []byte(c.old)) {
					t.Fatalf("%s holds no %q", name, c.old)
				}
				data = bytes.Replace(data, []byte(c.old), []byte(c.new), 1)
			}
			if err := fsys.WriteFile(filepath.Join("/deploy", name), data); err != nil {
				t.Fatal(err)
			}
		}
		objs, err := buildObjects(fsys, "/deploy")
		if err == nil {
			err = objs.checkOneNode()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s with %q: %v, want an error with %q", c.file, c.new, err, c.want)
		}
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
func newPod(t *testing.T, job batchv1.Job, img image, imageFS, volumes map[string]string, index int) pod {
	t.Helper()
	spec := job.Spec.Template.Spec
	if len(spec.Containers) != 1 {
		t.Fatalf("job %s: %d containers, want 1", job.Name, len(spec.Containers))
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
			if v.Name == m.Name && v.PersistentVolumeClaim != nil {
				claim = v.PersistentVolumeClaim.ClaimName
			}
		}
		local, ok := volumes[claim]
		if !ok {
			t.Fatalf("job %s mounts volume %q: not a claim the manifests declare (%q)", job.Name, m.Name, claim)
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
	objs, err := buildObjects(filesys.MakeFsOnDisk(), ".")
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	imageFS := buildImage(t, img, dir)
	volumes := map[string]string{}
	for _, pvc := range objs.claims {
		volumes[pvc.Name] = filepath.Join(dir, "volume-"+pvc.Name)
		if err := os.Mkdir(volumes[pvc.Name], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var shardJob, mergeJob *batchv1.Job
	for i := range objs.jobs {
		if m := objs.jobs[i].Spec.CompletionMode; m != nil && *m == batchv1.IndexedCompletion {
			shardJob = &objs.jobs[i]
		} else {
			mergeJob = &objs.jobs[i]
		}
	}
	if shardJob == nil || mergeJob == nil || len(volumes) != 1 {
		t.Fatalf("want an Indexed Job, a merge Job and one claim; got shards %v, merge %v, claims %v", shardJob != nil, mergeJob != nil, volumes)
	}
	if s := mergeJob.Spec.Suspend; s == nil || !*s {
		t.Errorf("job %s is not suspended: it would run before the shards are done", mergeJob.Name)
	}
	if s := shardJob.Spec.Suspend; s != nil && *s {
		t.Errorf("job %s is suspended: nothing would run", shardJob.Name)
	}
	n32 := shardJob.Spec.Completions
	if n32 == nil || *n32 < 1 || shardJob.Spec.Parallelism == nil || *shardJob.Spec.Parallelism < 1 || *shardJob.Spec.Parallelism > *n32 {
		t.Fatalf("job %s: completions %v, parallelism %v (want completions >= 1, parallelism 1 to completions)",
			shardJob.Name, n32, shardJob.Spec.Parallelism)
	}
	n := ptrInt(int(*n32))
	if p := shardJob.Spec.PodFailurePolicy; p != nil {
		for _, rule := range p.Rules {
			if rule.OnExitCodes != nil && (rule.OnExitCodes.ContainerName == nil || *rule.OnExitCodes.ContainerName != shardJob.Spec.Template.Spec.Containers[0].Name) {
				t.Errorf("a pod failure rule names container %v, not the shard's", rule.OnExitCodes.ContainerName)
			}
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
	// The merge's flags: its args but the last, the volume's directory.
	if mp.argv[len(mp.argv)-1] != volume {
		t.Fatalf("the merge Job runs %q: want the volume %s last", mp.argv, volume)
	}
	outputFlags := mp.argv[mergeAt+1 : len(mp.argv)-1]
	whole := append(withoutFlags(shardArgs, []string{"shard", "out"}, []string{"json"}), outputFlags...)
	wp := pod{argv: whole, env: mp.env}
	want, errOut, code := wp.run(t, dir)
	if code != 0 || errOut != "" {
		t.Fatalf("the whole sweep %q: exit %d, stderr:\n%s", whole, code, errOut)
	}
	if merged != want {
		t.Fatalf("the merge Job's log differs from the whole sweep %q:\n%s\n---\n%s", whole, merged, want)
	}
	// The log, saved (kubectl logs job/... > merged.json), is the result:
	// its table is the whole sweep's, and retrysim-plot draws it.
	saved := filepath.Join(dir, "merged.json")
	if err := os.WriteFile(saved, []byte(merged), 0o644); err != nil {
		t.Fatal(err)
	}
	table, errOut, code := pod{argv: []string{mp.argv[0], "fleet", "merge", "--legend", saved}, env: mp.env}.run(t, dir)
	wantTable, errOut2, code2 := pod{argv: append(withoutFlags(shardArgs, []string{"shard", "out"}, []string{"json"}), "--legend"), env: mp.env}.run(t, dir)
	if code != 0 || code2 != 0 || table != wantTable || !strings.Contains(table, "fleet outage-529") {
		t.Fatalf("merge --legend of the saved log (exit %d, %s) differs from the whole sweep's table (exit %d, %s):\n%s\n---\n%s",
			code, errOut, code2, errOut2, table, wantTable)
	}
	part, err := fleet.ReadPartial([]byte(merged))
	if err != nil {
		t.Fatalf("the saved log is not a partial result retrysim-plot reads: %v", err)
	}
	res, err := fleet.MergePartials([]*fleet.Partial{part}, []string{saved})
	if err != nil {
		t.Fatal(err)
	}
	var svg bytes.Buffer
	if err := fleetplot.Write(&svg, res, "svg"); err != nil || !bytes.Contains(svg.Bytes(), []byte("fleet outage-529")) {
		t.Fatalf("retrysim-plot's drawing of the saved log: %v", err)
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

// ptrInt is a pointer to v.
func ptrInt(v int) *int { return &v }

// reverse is n-1, ..., 1, 0.
func reverse(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = n - 1 - i
	}
	return out
}
