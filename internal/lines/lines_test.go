package lines

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReader(t *testing.T) {
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
				lr := NewReader(r, tt.max)
				var got []line
				for {
					l, tooLong, err := lr.Next()
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

func TestReaderError(t *testing.T) {
	boom := errors.New("boom")
	lr := NewReader(io.MultiReader(strings.NewReader("a\n"), iotest.ErrReader(boom)), 10)
	if l, _, err := lr.Next(); err != nil || string(l) != "a" {
		t.Fatalf("first line: %q, %v", l, err)
	}
	if _, _, err := lr.Next(); !errors.Is(err, boom) {
		t.Fatalf("got %v, want boom", err)
	}
}
