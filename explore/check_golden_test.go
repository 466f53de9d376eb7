package explore

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ohmypi/retryfsm/internal/testkit"
	"github.com/ohmypi/retryfsm/session"
)

// checkText is what the golden check files hold: Check's summary, a
// digest of every state in number order with its edge in the BFS tree (so
// the same states, numbered alike, with the same shortest paths), and
// every counterexample with its path and scenario file.
func checkText(sum *Summary) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s pruned=%d\n", sum.Line(), sum.Pruned)
	for _, r := range sum.Results {
		fmt.Fprintf(&b, "maxRetries %d: states=%d transitions=%d pruned=%d nodes-sha256=%x\n", r.MaxRetries, r.States, r.Transitions, r.Pruned, nodesDigest(r))
	}
	for _, cx := range sum.Counterexamples {
		fmt.Fprintf(&b, "# violation: %s (maxRetries %d): path %v\n", cx.Invariant, cx.MaxRetries, cx.Path)
		if cx.Replay != nil {
			b.Write(cx.Replay.YAML)
		}
	}
	return b.Bytes()
}

// nodesDigest hashes r's nodes in state order: key, input and parent.
func nodesDigest(r *Result) []byte {
	h := sha256.New()
	var buf []byte
	for i := range r.States {
		n := &r.nodes[i>>chunkBits][i&(chunkLen-1)]
		buf = binary.LittleEndian.AppendUint64(buf[:0], n.hdr)
		for _, x := range n.rem {
			buf = binary.LittleEndian.AppendUint32(buf, x)
		}
		buf = binary.LittleEndian.AppendUint32(buf, n.hist)
		buf = binary.LittleEndian.AppendUint32(buf, uint32(n.parent))
		h.Write(buf)
	}
	return h.Sum(nil)
}

// TestCheckOriginal11Golden: `retrysim check --variant original
// --max-retries 11`, the explorer's largest single check
// (BenchmarkCheckOriginal11), finds the same states, numbered alike with
// the same BFS tree, the same transitions and the same counterexamples as
// testdata/check-original-11.golden records (-update rewrites it). It
// takes seconds and hundreds of MB: opt-in (RETRYSIM_SOAK=1, as .ci/run
// runs it); TestCountsGolden checks the small explorations every time.
func TestCheckOriginal11Golden(t *testing.T) {
	testkit.Need(t, testkit.Soak, "seconds of CPU and 300 MB")
	sum, err := Check(session.Original, 11, 11)
	if err != nil {
		t.Fatal(err)
	}
	compareGolden(t, filepath.Join("testdata", "check-original-11.golden"), checkText(sum))
}

// compareGolden compares got with the file at path, which -update
// rewrites.
func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./explore -run %s -update)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("differs from %s (-update rewrites it):\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}
