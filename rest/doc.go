// Package rest owns the consequences of DESIGN.md's decision table: what a
// failure holds back (a route, or every route of a provider) and for how
// long. Package failure says what happened (the class of an attempt);
// Policy, compiled from config.RestTimes, says what follows from it. Its
// Key is the one place a rest's key is formatted and parsed.
package rest
