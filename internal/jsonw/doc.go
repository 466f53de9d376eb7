// Package jsonw writes JSON the way JavaScript's JSON.stringify does:
// strings escaped as it escapes them (no HTML escaping), numbers as
// ECMAScript's Number::toString writes them. The trace, the events and the
// RPC server share it.
package jsonw
