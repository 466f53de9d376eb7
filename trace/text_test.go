package trace_test

import (
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/trace"
)

func TestFormatText(t *testing.T) {
	tests := []struct {
		name  string
		trace string
		want  string
	}{
		{
			name: "aligned columns",
			trace: `{"t":0,"type":"agent_run","kind":"prompt"}
{"t":0,"type":"agent_run_end"}
{"t":2000,"type":"auto_retry_start","attempt":2,"maxAttempts":3,"delayMs":4000,"errorMessage":"503 service unavailable"}
{"t":14000,"type":"auto_retry_end","success":true,"attempt":3}
`,
			want: "      0   0.000s  agent_run         kind=prompt\n" +
				"      0   0.000s  agent_run_end\n" +
				"   2000   2.000s  auto_retry_start  attempt=2 maxAttempts=3 delayMs=4000 errorMessage=\"503 service unavailable\"\n" +
				"  14000  14.000s  auto_retry_end    success=true attempt=3\n",
		},
		{
			name:  "keys keep their order in the line",
			trace: `{"type":"x","zeta":1,"alpha":2,"t":5,"mid":3}` + "\n",
			want:  "  5  0.005s  x  zeta=1 alpha=2 mid=3\n",
		},
		{
			name: "values",
			trace: `{"t":1,"type":"v","s":"plain","sp":"a b","empty":"","num":"12","bool":"true","null":null,` +
				`"eq":"a=b","q":"say \"hi\"","tab":"a\tb","uni":"héllo","f":1.5,"neg":-2,"big":1e21,` +
				`"obj":{ "b" : 1, "a" : [ 1, 2 ] },"list":[],"ok":false}` + "\n",
			want: `  1  0.001s  v  s=plain sp="a b" empty="" num="12" bool="true" null=null eq="a=b" q="say \"hi\"" ` +
				`tab="a\tb" uni=héllo f=1.5 neg=-2 big=1e21 obj={"b":1,"a":[1,2]} list=[] ok=false` + "\n",
		},
		{
			name:  "odd keys are quoted",
			trace: `{"t":1,"type":"k","a b":1,"x=y":2,"":3,"7":4}` + "\n",
			want:  `  1  0.001s  k  "a b"=1 "x=y"=2 ""=3 7=4` + "\n",
		},
		{
			name:  "odd times and types",
			trace: `{"t":-1500,"type":"neg"}` + "\n" + `{"t":1500.25,"type":"frac"}` + "\n" + `{"t":"x","type":"a b"}` + "\n" + `{"other":1}` + "\n",
			want: "    -1500  -1.500s  neg\n" +
				"  1500.25   1.500s  frac\n" +
				"        x           \"a b\"\n" +
				"                           other=1\n",
		},
		{
			name:  "blank lines are skipped",
			trace: "\n" + `{"t":7,"type":"a"}` + "\n\n  \n" + `{"t":8,"type":"b"}`,
			want:  "  7  0.007s  a\n  8  0.008s  b\n",
		},
		{name: "empty", trace: "", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := trace.FormatText([]byte(tt.trace))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestFormatTextErrors(t *testing.T) {
	tests := []struct{ name, trace, want string }{
		{"not JSON", `{"t":0,"type":"a"}` + "\n" + "{oops\n", "trace line 2:"},
		{"a list", "[1,2]\n", "trace line 1: not a JSON object"},
		{"a string", `"x"` + "\n", "trace line 1: not a JSON object"},
		{"data after the object", `{"t":0} {"t":1}` + "\n", "trace line 1: data after the object"},
		{"truncated", `{"t":0,"type":` + "\n", "trace line 1:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := trace.FormatText([]byte(tt.trace))
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("got error %v, want one starting with %q", err, tt.want)
			}
		})
	}
}

// TestFormatTextEscapesForTheTerminal: what JSON quoting leaves as it is
// (DEL, C1 controls, bidirectional overrides) is escaped in the timeline,
// which run --watch prints as it happens.
func TestFormatTextEscapesForTheTerminal(t *testing.T) {
	line := "{\"t\":0,\"type\":\"message_end\",\"errorMessage\":\"a\u202eb\u0085c\u007fd ทดสอบ\"}\n"
	out, err := trace.FormatText([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"\u202e", "\u0085", "\u007f"} {
		if strings.Contains(string(out), r) {
			t.Errorf("timeline keeps %q raw: %q", r, out)
		}
	}
	if !strings.Contains(string(out), `\u202e`) || !strings.Contains(string(out), "ทดสอบ") {
		t.Errorf("timeline %q: want \\u202e escaped and Thai kept", out)
	}
}
