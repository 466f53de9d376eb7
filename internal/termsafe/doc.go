// Package termsafe makes text from files and the network safe to print on
// a terminal.
package termsafe
