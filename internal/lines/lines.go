// Package lines reads newline-terminated lines with a size bound, for
// the JSON Lines readers of the module (the RPC server and client, the log
// audit): memory stays bounded by the bound whatever the input.
package lines

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// Reader reads newline-terminated lines with a size bound. It accepts
// "\r\n" and a last line without a terminator. Unlike bufio.Scanner it does
// not stop at an over-long line: it reports it and skips to the next one.
type Reader struct {
	br  *bufio.Reader
	max int
	buf []byte
	eof bool
}

// NewReader returns a Reader of r whose lines are at most max bytes long
// (not counting the terminator).
func NewReader(r io.Reader, max int) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next line without its terminator. tooLong reports a line
// over the bound, which was read to its end and dropped (line is then nil).
// At the end of the input err is io.EOF; any other error is the reader's.
// The line is valid until the next call.
func (lr *Reader) Next() (line []byte, tooLong bool, err error) {
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
			// Room for the content plus "\r\n"; anything longer is over
			// the bound whatever its terminator.
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

func (lr *Reader) finish(over bool) ([]byte, bool, error) {
	if over {
		lr.buf = lr.buf[:0]
		return nil, true, nil
	}
	line := bytes.TrimSuffix(lr.buf, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if len(line) > lr.max {
		return nil, true, nil
	}
	return line, false, nil
}
