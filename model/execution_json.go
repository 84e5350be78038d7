package model

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The execution's canonical JSON, written directly: the same bytes as
// marshalling a map of its fields with encoding/json (sorted keys, no HTML
// escaping, compact), without building the map or reflecting over it.
// Every store writes it on each commit and the recorder identifies every
// execution it sees by it, so it is on the hot path of both
// (TestExecutionJSONMatchesTheMap holds it to the map's bytes).

// The contract's fields, by their keys' position in the order
// encoding/json sorts them.
const (
	memberActivePath = iota
	memberContext
	memberDefinitionID
	memberID
	memberOutcome
	memberParentID
	memberStatus
	memberVersion
)

// knownKeys are the keys of the contract's fields, by position.
var knownKeys = [...]string{
	memberActivePath:   "active_path",
	memberContext:      "context",
	memberDefinitionID: "definition_id",
	memberID:           "id",
	memberOutcome:      "outcome",
	memberParentID:     "parent_id",
	memberStatus:       "status",
	memberVersion:      "version",
}

// knownLabels are knownKeys as they open their members, `"key":`: plain
// ASCII, so written as they are rather than scanned for escapes each time.
var knownLabels = func() (labels [len(knownKeys)]string) {
	for i, k := range knownKeys {
		labels[i] = `"` + k + `":`
	}
	return labels
}()

// appendExecution appends e's canonical JSON, with ctx its canonical
// context. The contract's members and Extra's, each in sorted order, are
// merged; an extra key equal to a contract key meets it there and is
// refused.
func appendExecution(buf []byte, e *Execution, ctx []byte) ([]byte, error) {
	var few [8]extraMember // most executions carry a few extra fields: no allocation
	extras := few[:0]
	for k, v := range e.Extra {
		extras = append(extras, extraMember{k, v})
	}
	slices.SortFunc(extras, func(a, b extraMember) int { return strings.Compare(a.key, b.key) })
	buf = append(buf, '{')
	known, extra := 0, 0
	for n := 0; known < len(knownKeys) || extra < len(extras); n++ {
		if n > 0 {
			buf = append(buf, ',')
		}
		if extra == len(extras) || (known < len(knownKeys) && knownKeys[known] < extras[extra].key) {
			buf = appendKnown(append(buf, knownLabels[known]...), e, known, ctx)
			known++
			continue
		}
		m := extras[extra]
		extra++
		if known < len(knownKeys) && knownKeys[known] == m.key {
			return nil, fmt.Errorf("execution extra field %q shadows a contract field", m.key)
		}
		c, err := CanonicalJSONBytes(m.value)
		if err != nil {
			return nil, fmt.Errorf("execution extra field %q: %w", m.key, err)
		}
		buf = appendString(buf, m.key)
		buf = append(buf, ':')
		buf = append(buf, c...)
	}
	return append(buf, '}'), nil
}

// extraMember is one field of Extra.
type extraMember struct {
	key   string
	value []byte
}

// appendKnown appends the value of the contract field at position member.
func appendKnown(buf []byte, e *Execution, member int, ctx []byte) []byte {
	switch member {
	case memberActivePath:
		return appendString(buf, e.ActivePath)
	case memberContext:
		return append(buf, ctx...)
	case memberDefinitionID:
		return appendString(buf, e.DefinitionID)
	case memberID:
		return appendString(buf, e.ID)
	case memberOutcome:
		return appendNullable(buf, e.Outcome)
	case memberParentID:
		return appendNullable(buf, e.ParentID)
	case memberStatus:
		return appendString(buf, e.Status)
	default: // memberVersion
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
