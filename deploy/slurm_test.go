package deploy

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// slurmEnv opts in to TestSlurmSweep: it starts Slurm's daemons as root.
const slurmEnv = "RETRYSIM_SLURM"

// slurmDeadline bounds the whole sweep on the cluster: the jobs run in
// seconds; one that never runs fails the test with the queue's state.
const slurmDeadline = 4 * time.Minute

// TestSlurmSweep runs deploy/slurm/ for real: a throwaway one-node cluster
// (cluster.sh: munged, slurmctld and slurmd), a sweep submitted with
// sweep.sh (a job array of 4 shards, then a merge job that depends on it
// with afterok), and checks that every shard ran, that the merged result
// (--json --shard 0/1: what retrysim-plot draws) and table are byte for
// byte what one machine prints for the same sweep, and
// that stopping the cluster leaves none of its daemons running. Opt-in
// (RETRYSIM_SLURM=1, as root, with Debian's slurm-wlm and munge: .ci/run
// installs them); without them it skips saying which is missing.
func TestSlurmSweep(t *testing.T) {
	if os.Getenv(slurmEnv) != "1" {
		t.Skipf("runs a real Slurm cluster: set %s=1 (as root, with slurm-wlm and munge installed; .ci/run does)", slurmEnv)
	}
	for _, exe := range []string{"slurmctld", "slurmd", "munged", "sbatch"} {
		if _, err := exec.LookPath(exe); err != nil {
			t.Skipf("%s=1 but %s is not installed (apt-get install -y slurm-wlm munge)", slurmEnv, exe)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), slurmDeadline)
	defer cancel()
	root := moduleRoot(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "retrysim")
	build := exec.CommandContext(ctx, filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, "./cmd/retrysim")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	cluster := filepath.Join(dir, "cluster")
	script := filepath.Join(root, "deploy", "slurm", "cluster.sh")
	env := append(os.Environ(), "SLURMCTLD_PORT="+freePort(t), "SLURMD_PORT="+freePort(t),
		"SLURM_CONF="+filepath.Join(cluster, "slurm.conf"))
	run := func(name string, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Env, cmd.Dir, cmd.WaitDelay = env, dir, 10*time.Second
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	if out, err := run(script, "start", cluster); err != nil {
		t.Fatalf("cluster.sh start: %v\n%s%s", err, out, logs(cluster))
	}
	daemons := pids(t, cluster)
	t.Cleanup(func() {
		stop := exec.Command(script, "stop", cluster)
		stop.WaitDelay = 10 * time.Second
		if out, err := stop.CombinedOutput(); err != nil {
			t.Errorf("cluster.sh stop: %v\n%s", err, out)
		}
		for name, pid := range daemons {
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("%s (pid %d) still runs after cluster.sh stop (kill -0: %v)", name, pid, err)
			}
		}
	})
	if len(daemons) != 3 {
		t.Fatalf("the cluster's pid files name %v, want munged, slurmctld and slurmd", daemons)
	}

	results := filepath.Join(dir, "results")
	sweep := []string{"--seeds", "1-6", filepath.Join(root, "fleets", "outage-529.yaml"), filepath.Join(root, "fleets", "quota-window.yaml")}
	env = append(env, "SHARDS=4", "RETRYSIM="+bin)
	out, err := run(filepath.Join(root, "deploy", "slurm", "sweep.sh"), append([]string{"-w", results}, sweep...)...)
	if err != nil {
		// The queue's state now, in a context of its own (ctx may be done).
		state := func(args ...string) string {
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Env, cmd.WaitDelay = env, 10*time.Second
			out, _ := cmd.CombinedOutput()
			return string(out)
		}
		queue, jobs := state("squeue", "-a", "-o", "%i %j %T %r"), state("scontrol", "show", "job")
		t.Fatalf("sweep.sh -w (deadline %s): %v\n%s\nsqueue:\n%s\nscontrol show job:\n%s%s", slurmDeadline, err, out, queue, jobs, logs(cluster))
	}
	if !strings.Contains(out, "shards: job ") || !strings.Contains(out, "merge: job ") {
		t.Errorf("sweep.sh printed %q: want the array's and the merge's job ids", out)
	}
	for i := range 4 {
		if _, err := os.Stat(filepath.Join(results, "shards", "shard-"+strconv.Itoa(i)+".json")); err != nil {
			t.Errorf("array task %d wrote no partial: %v", i, err)
		}
	}
	for _, c := range []struct {
		file  string
		flags []string
	}{{"merged.json", []string{"--json", "--shard", "0/1"}}, {"merged.txt", []string{"--legend"}}} {
		got, err := os.ReadFile(filepath.Join(results, c.file))
		if err != nil {
			t.Fatalf("the merge job: %v\n%s", err, logs(results))
		}
		want, err := exec.Command(bin, append(append([]string{"fleet"}, c.flags...), sweep...)...).Output()
		if err != nil {
			t.Fatalf("the one-machine sweep %q: %v", c.flags, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("Slurm's merged %s differs from the one-machine sweep's %q:\n%s\n---\n%s", c.file, c.flags, got, want)
		}
	}
}

// freePort is a TCP port free on the loopback now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// pids are the daemons cluster.sh started: name -> pid, from their pid files.
func pids(t *testing.T, cluster string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for name, file := range map[string]string{"munged": "munge/munged.pid", "slurmctld": "slurmctld.pid", "slurmd": "slurmd.pid"} {
		data, err := os.ReadFile(filepath.Join(cluster, file))
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
			out[name] = pid
		}
	}
	return out
}

// logs are the files of dir's log folder, for a failure's message.
func logs(dir string) string {
	var b strings.Builder
	files, _ := filepath.Glob(filepath.Join(dir, "log", "*"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		b.WriteString("\n--- " + f + "\n")
		b.Write(data)
	}
	return b.String()
}
