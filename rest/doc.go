// Package rest owns the consequences of DESIGN.md's decision table: what a
// failure holds back (a route, or every route of a provider) and for how
// long. Its Key is the one place a rest's key is formatted and parsed.
package rest
