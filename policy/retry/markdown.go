package retry

import (
	"fmt"
	"strings"
)

// TableMarkdown renders the table as Markdown for SPEC.md: one row per
// rule, with its guard, event, target and effects.
func (v *Variant) TableMarkdown() string {
	var b strings.Builder
	b.WriteString("| from | input | guard | event | to | effects |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, r := range v.rules {
		from := make([]string, len(r.From))
		for i, s := range r.From {
			from[i] = string(s)
		}
		ev, to := r.Event, string(r.To)
		if r.Ignored() {
			ev, to = "(ignored)", "(same)"
		}
		var steps []string
		for _, st := range r.Steps {
			x := st.String()
			if st == StepEmitEnd {
				switch r.Final {
				case FinalNone:
					x += " {success:true}"
				case FinalMessage:
					x += " {success:false, finalError: the error}"
				case FinalMessageOrUnknown:
					x += ` {success:false, finalError: the error, or "Unknown error" without text}`
				case FinalCancelled:
					x += ` {success:false, finalError:"Retry cancelled"}`
				case FinalNoMessage:
					x += ` {success:false, finalError:"` + NoAssistantMessage + `"}`
				}
			}
			steps = append(steps, x)
		}
		eff := strings.Join(steps, "; ")
		if r.Note != "" {
			if eff != "" {
				eff += ". "
			}
			eff += r.Note
		}
		g := r.Guard.Name
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", strings.Join(from, ", "), r.Input, g, ev, to, eff)
	}
	return b.String()
}
