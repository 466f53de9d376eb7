package strictfile

import (
	"io"
	"os"
)

// ReadFile reads the file path whole, reading never more than max+1
// bytes: tooLarge reports a file of more than max bytes (data then holds
// its first max+1). A regular file is read in one go, into a buffer of its
// size; a pipe or a device in steps. Every reader of the project's files
// reads them with it.
func ReadFile(path string, max int) (data []byte, tooLarge bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	hint := 512
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		hint = int(min(fi.Size(), int64(max))) + 1
	}
	data, err = ReadAtMost(f, hint, max+1)
	return data, len(data) > max, err
}

// ReadAtMost reads r to its end or to limit bytes, whichever is first,
// into a buffer first sized hint.
func ReadAtMost(r io.Reader, hint, limit int) ([]byte, error) {
	b := make([]byte, 0, max(0, min(hint, limit)))
	for len(b) < limit {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):min(cap(b), limit)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}
