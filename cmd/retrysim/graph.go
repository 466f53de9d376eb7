package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/ohmypi/retryfsm/policy"
)

func init() {
	register(&command{
		name:  "graph",
		short: "print the retry machine as a Graphviz or mermaid diagram",
		long: `Prints the retry state machine of a policy variant (default: sound) as a
Graphviz digraph (--format dot) or a mermaid state diagram (--format mermaid).

Exit status: 0 when the diagram was printed, 2 on invalid flags.`,
		flags: func(fs *flag.FlagSet) {
			variantFlag(fs, "draw the machine of the policy variant `NAME` instead of sound")
			fs.String("format", "dot", "draw the machine as `FORMAT`: dot (Graphviz) or mermaid")
		},
		run: runGraph,
	})
}

func runGraph(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) int {
	c := lookup("graph")
	if len(args) != 0 {
		return usageError(c, stderr, "unexpected arguments: %s", strings.Join(args, " "))
	}
	name, ok := checkVariant(c, fs, stderr)
	if !ok {
		return exitUsage
	}
	format, ok := checkFormat(c, fs, stderr, "dot", "mermaid")
	if !ok {
		return exitUsage
	}
	v, err := policy.VariantByName(name)
	if err != nil { // checked above
		fmt.Fprintf(stderr, "retrysim graph: %v\n", err)
		return exitUsage
	}
	out := v.Machine().DOT()
	if format == "mermaid" {
		out = v.Machine().Mermaid()
	}
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	if _, err := io.WriteString(stdout, out); err != nil {
		fmt.Fprintf(stderr, "retrysim graph: %v\n", err)
		return exitFail
	}
	return exitOK
}
