// Package config owns tollfree's configuration: the YAML file's schema, the
// free-tier provider presets, the roles read from the environment, and the
// compilation of all of them into the immutable *Plan the router and the
// server read without locks.
//
// Loading runs in fixed stages (docs/STYLE.md, "Configuration"): decode the file
// into plain structs (File), apply defaults, validate (collecting every
// problem, never panicking), then compile into a *Plan. The stages are
// internal; Parse and Load run all four;
// Default builds a plan with no file at all, from the presets and whatever
// provider keys the environment holds.
//
// Every problem names the file, the line and the field, and says what would
// be valid; all of a file's problems come back together in one *Error.
// Keys are read only from the environment (${GROQ_API_KEY}) or a file
// (api_key_file) and never appear in an error, a table or a String method.
package config
