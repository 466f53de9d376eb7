// Package testkit is what the module's tests share, one package so that
// the go command links one test binary for it, not one for each:
//
//   - Program: a command of the module as a real program, its executable
//     linked once and then kept by the go command's build cache (the RPC
//     client's tests run retrysim);
//   - Feed, HeapAlloc and CPUTime: for the memory tests (an input made
//     block by block as it is read, the heap in use) and the benchmarks
//     that report the process's CPU time;
//   - Need, with JS, Soak, README and Build: the opt-in tests, which
//     README's `go test ./...` skips, saying how to run them;
//   - Screen: the output the terminal tests wait on for a text, without
//     sleeping.
//
// Its own tests also run the module's checks of its shape: doc comments on
// every exported identifier and package, the layers of SPEC.md's package
// table and what the programs link, the sizes of files and functions.
package testkit
