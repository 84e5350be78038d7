package model

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"unicode/utf8"
)

// The execution's canonical JSON, written directly: the same bytes as
// marshalling a map of its fields with encoding/json (sorted keys, no HTML
// escaping, compact), without building the map or reflecting over it.
// Every store writes it on each commit and the recorder identifies every
// execution it sees by it, so it is on the hot path of both
// (TestExecutionJSONMatchesTheMap holds it to the map's bytes).

// knownKeys are the contract's keys (knownFields) in the order
// encoding/json sorts them.
var knownKeys = slices.Sorted(maps.Keys(knownFields))

// appendExecution appends e's canonical JSON, with ctx its canonical
// context.
func appendExecution(buf []byte, e *Execution, ctx []byte) ([]byte, error) {
	extras := make([]string, 0, len(e.Extra))
	for k := range e.Extra {
		if knownFields[k] {
			return nil, fmt.Errorf("execution extra field %q shadows a contract field", k)
		}
		extras = append(extras, k)
	}
	slices.Sort(extras)
	buf = append(buf, '{')
	known, extra := 0, 0
	for n := 0; known < len(knownKeys) || extra < len(extras); n++ {
		if n > 0 {
			buf = append(buf, ',')
		}
		if extra == len(extras) || (known < len(knownKeys) && knownKeys[known] < extras[extra]) {
			k := knownKeys[known]
			known++
			buf = appendString(buf, k)
			buf = append(buf, ':')
			buf = appendKnown(buf, e, k, ctx)
			continue
		}
		k := extras[extra]
		extra++
		c, err := CanonicalJSON(e.Extra[k])
		if err != nil {
			return nil, fmt.Errorf("execution extra field %q: %w", k, err)
		}
		buf = appendString(buf, k)
		buf = append(buf, ':')
		buf = append(buf, c...)
	}
	return append(buf, '}'), nil
}

// appendKnown appends the value of the contract field k.
func appendKnown(buf []byte, e *Execution, k string, ctx []byte) []byte {
	switch k {
	case "active_path":
		return appendString(buf, e.ActivePath)
	case "context":
		return append(buf, ctx...)
	case "definition_id":
		return appendString(buf, e.DefinitionID)
	case "id":
		return appendString(buf, e.ID)
	case "outcome":
		return appendNullable(buf, e.Outcome)
	case "parent_id":
		return appendNullable(buf, e.ParentID)
	case "status":
		return appendString(buf, e.Status)
	default: // "version"
		return strconv.AppendInt(buf, e.Version, 10)
	}
}

func appendNullable(buf []byte, s *string) []byte {
	if s == nil {
		return append(buf, "null"...)
	}
	return appendString(buf, *s)
}

// appendString appends s as a JSON string as encoding/json writes it with
// HTML escaping off. Plain printable ASCII, the common case, is copied;
// anything else goes through encoding/json itself.
func appendString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			return appendStringSlow(buf, s)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}

func appendStringSlow(buf []byte, s string) []byte {
	b, err := marshalNoEscape(s)
	if err != nil { // a string always encodes
		panic(fmt.Sprintf("encode a JSON string: %v", err))
	}
	return append(buf, b...)
}
