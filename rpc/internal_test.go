package rpc

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/ohmypi/retryfsm/trace"
)

func TestLineReader(t *testing.T) {
	type line struct {
		text    string
		tooLong bool
	}
	tests := []struct {
		name  string
		input string
		max   int
		want  []line
	}{
		{"lf", "a\nbb\n", 10, []line{{"a", false}, {"bb", false}}},
		{"crlf", "a\r\nbb\r\n", 10, []line{{"a", false}, {"bb", false}}},
		{"no final newline", "a\nbb", 10, []line{{"a", false}, {"bb", false}}},
		{"final cr without lf", "a\r", 10, []line{{"a", false}}},
		{"empty lines", "\n\r\n", 10, []line{{"", false}, {"", false}}},
		{"empty input", "", 10, nil},
		{"exactly max", "12345\n", 5, []line{{"12345", false}}},
		{"exactly max with crlf", "12345\r\n", 5, []line{{"12345", false}}},
		{"max plus one", "123456\nok\n", 5, []line{{"", true}, {"ok", false}}},
		{"max plus one with crlf", "123456\r\nok\n", 5, []line{{"", true}, {"ok", false}}},
		{"max plus cr and more", "12345\rx\nok\n", 5, []line{{"", true}, {"ok", false}}},
		{"huge line then more", strings.Repeat("x", 300000) + "\nok", 1000, []line{{"", true}, {"ok", false}}},
		{"huge last line", "ok\n" + strings.Repeat("x", 300000), 1000, []line{{"ok", false}, {"", true}}},
	}
	for _, tt := range tests {
		for _, oneByte := range []bool{false, true} {
			name := tt.name
			var r io.Reader = strings.NewReader(tt.input)
			if oneByte {
				name += "/one byte reads"
				r = iotest.OneByteReader(r)
			}
			t.Run(name, func(t *testing.T) {
				lr := newLineReader(r, tt.max)
				var got []line
				for {
					l, tooLong, err := lr.next()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, line{string(l), tooLong})
					if len(got) > 10 {
						t.Fatal("too many lines")
					}
				}
				if len(got) != len(tt.want) {
					t.Fatalf("got %d lines %+v, want %+v", len(got), got, tt.want)
				}
				for i := range got {
					if got[i] != tt.want[i] {
						t.Errorf("line %d = %+v, want %+v", i, got[i], tt.want[i])
					}
				}
				if cap(lr.buf) > tt.max+2+64<<10 {
					t.Errorf("line buffer grew to %d bytes (bound %d)", cap(lr.buf), tt.max)
				}
			})
		}
	}
}

func TestLineReaderError(t *testing.T) {
	boom := errors.New("boom")
	lr := newLineReader(io.MultiReader(strings.NewReader("a\n"), iotest.ErrReader(boom)), 10)
	if l, _, err := lr.next(); err != nil || string(l) != "a" {
		t.Fatalf("first line: %q, %v", l, err)
	}
	if _, _, err := lr.next(); !errors.Is(err, boom) {
		t.Fatalf("got %v, want boom", err)
	}
}

func TestAppendEvent(t *testing.T) {
	tests := []struct {
		line       string
		want, nowT string // "" = dropped
	}{
		{`{"t":5,"type":"agent_run","kind":"prompt","model":"claude-sonnet-4-5"}`, `{"type":"agent_start"}`, `{"t":5,"type":"agent_start"}`},
		{`{"t":5,"type":"agent_run_end"}`, `{"type":"agent_end"}`, `{"t":5,"type":"agent_end"}`},
		{`{"t":0,"type":"message_end","message":{"role":"assistant","stopReason":"stop"},"model":"claude-sonnet-4-5"}`,
			`{"type":"message_end","message":{"role":"assistant","stopReason":"stop"},"model":"claude-sonnet-4-5"}`,
			`{"t":0,"type":"message_end","message":{"role":"assistant","stopReason":"stop"},"model":"claude-sonnet-4-5"}`},
		{`{"t":1,"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529"}`,
			`{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529"}`,
			`{"t":1,"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529"}`},
		{`{"t":2,"type":"auto_retry_end","success":true,"attempt":1}`, `{"type":"auto_retry_end","success":true,"attempt":1}`, `{"t":2,"type":"auto_retry_end","success":true,"attempt":1}`},
		{`{"t":2,"type":"auto_compaction_start","reason":"overflow"}`, `{"type":"auto_compaction_start","reason":"overflow"}`, `{"t":2,"type":"auto_compaction_start","reason":"overflow"}`},
		{`{"t":2,"type":"auto_compaction_end","aborted":false,"willRetry":false}`, `{"type":"auto_compaction_end","aborted":false,"willRetry":false}`, `{"t":2,"type":"auto_compaction_end","aborted":false,"willRetry":false}`},
		{`{"t":3,"type":"prompt_resolved","prompt":1}`, `{"type":"prompt_resolved","prompt":1}`, `{"t":3,"type":"prompt_resolved","prompt":1}`},
		{`{"t":0,"type":"transition","from":"idle","event":"retry","to":"backoff"}`, "", ""},
		{`{"t":0,"type":"response","command":"abort","success":true}`, "", ""},
		{`{"t":0,"type":"final","state":"idle"}`, "", ""},
		{`{"t":0,"type":"mark_usage_limit_reached","provider":"x"}`, "", ""},
		{`{"t":0,"type":"prompt_rejected","prompt":2}`, "", ""},
		{`{"t":0,"type":"continue_rejected","error":"x"}`, "", ""},
	}
	for _, tt := range tests {
		r, err := trace.Decode([]byte(tt.line))
		if err != nil {
			t.Fatalf("%s: %v", tt.line, err)
		}
		for _, withT := range []bool{false, true} {
			want := tt.want
			if withT {
				want = tt.nowT
			}
			if want != "" {
				want += "\n"
			}
			if got := string(appendEvent(nil, &r, withT)); got != want {
				t.Errorf("appendEvent(%s, %t) = %q, want %q", tt.line, withT, got, want)
			}
		}
	}
}
