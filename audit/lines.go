package audit

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// lineReader reads newline-terminated lines with a size bound. It accepts
// "\r\n" and a last line without a terminator. Unlike bufio.Scanner it does
// not stop at an over-long line: it reports it and skips to the next one,
// so the memory it takes stays bounded by its max.
type lineReader struct {
	br  *bufio.Reader
	max int
	buf []byte
	eof bool
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its terminator, valid until the next
// call. tooLong reports a line over the bound, which was read to its end and
// dropped (line is then nil). At the end of the input err is io.EOF; any
// other error is the reader's.
func (lr *lineReader) next() (line []byte, tooLong bool, err error) {
	if lr.eof {
		return nil, false, io.EOF
	}
	lr.buf = lr.buf[:0]
	over := false
	seen := false // any byte of this line read (terminator included)
	for {
		frag, err := lr.br.ReadSlice('\n')
		if len(frag) > 0 {
			seen = true
		}
		if !over {
			// Room for the content and "\r\n".
			if len(lr.buf)+len(frag) > lr.max+2 {
				over = true
				lr.buf = lr.buf[:0]
			} else {
				lr.buf = append(lr.buf, frag...)
			}
		}
		switch {
		case err == nil:
			return lr.finish(over)
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			lr.eof = true
			if !seen {
				return nil, false, io.EOF
			}
			return lr.finish(over)
		default:
			return nil, false, err
		}
	}
}

func (lr *lineReader) finish(over bool) ([]byte, bool, error) {
	if over {
		return nil, true, nil
	}
	line := bytes.TrimSuffix(lr.buf, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if len(line) > lr.max {
		return nil, true, nil
	}
	return line, false, nil
}
