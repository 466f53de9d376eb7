// Package classify reads an assistant reply once, where it enters the
// system: its class (retryable, overflow, fatal, aborted, success) by the
// one classification rule (Classifier.Classify, the original's by default),
// the usage-limit hint, the provider's wait hint (headers, then text), and
// the JavaScript number and date readers those hints need, written once.
// The result is an Outcome, the only thing of a reply the retry machine
// reads (SPEC §2). It imports nothing of the retry machine.
package classify
