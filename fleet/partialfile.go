package fleet

import (
	"fmt"
	"io"
	"os"

	"github.com/ohmypi/retryfsm/internal/strictfile"
)

// MaxPartialSize is the size bound the CLI's readers of partial results
// give ReadPartialFile and ReadPartialFrom: a shard's result holds one
// summary per fleet group, a few hundred kilobytes; a larger file is not
// one.
const MaxPartialSize = 256 << 20

// ReadPartialFile reads the partial result in the file path (one that
// 'retrysim fleet --shard I/N --json' wrote). It refuses a file larger
// than max bytes from its size before reading any of it, and a device or
// a folder (it has no size: /dev/zero would be read up to max), so that
// time and memory stay bounded whatever the input; a pipe (a process
// substitution) is read up to max bytes.
func ReadPartialFile(path string, max int64) (*Partial, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	switch mode := info.Mode(); {
	case mode.IsRegular():
		if info.Size() > max {
			return nil, fmt.Errorf("larger than %d bytes (%d bytes): not a partial result (one holds a summary per fleet group)", max, info.Size())
		}
	case mode&(os.ModeNamedPipe|os.ModeSocket) != 0:
	default:
		what := "not a regular file"
		switch {
		case mode.IsDir():
			what = "a folder"
		case mode&os.ModeDevice != 0:
			what = "a device"
		}
		return nil, fmt.Errorf("%s, not a partial result (a file 'retrysim fleet --shard I/N --json' wrote)", what)
	}
	return ReadPartialFrom(f, max)
}

// ReadPartialFrom reads one partial result from r (standard input, say),
// refusing more than max bytes.
func ReadPartialFrom(r io.Reader, max int64) (*Partial, error) {
	data, err := strictfile.ReadAtMost(r, 512, int(max)+1)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("larger than %d bytes: not a partial result (one holds a summary per fleet group)", max)
	}
	return ReadPartial(data)
}
