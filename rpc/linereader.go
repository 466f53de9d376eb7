package rpc

// MaxLineSize is the longest command line the server reads, in bytes, not
// counting its line terminator ("\n" or "\r\n"). A longer line is discarded
// unparsed; the memory a line can take stays bounded by this size.
const MaxLineSize = 1 << 20
