package config

// Daily resets are midnights in named zones (Gemini's is
// America/Los_Angeles). The embedded zone database makes them load in a
// container without /usr/share/zoneinfo, where the gemini preset would
// otherwise fail validation. It is consulted only when the system has no
// database of its own.
import _ "time/tzdata"
