package model

import (
	"encoding/json"
	"strconv"
)

// The execution's canonical JSON, read directly. Every store keeps an
// execution as the bytes AppendJSON wrote and decodes them on every load;
// encoding/json took three passes over them (validating, decoding into a
// map, then each field again). A document in the canonical form — compact,
// keys strictly ascending, strings with no escapes — is read here in one
// pass; anything else is left to UnmarshalJSON's general path, which
// defines the result (TestDecodeExecutionAgreesWithUnmarshal).

// DecodeExecution decodes a stored execution: what json.Unmarshal into an
// Execution returns, errors included, without its passes over a canonical
// document.
func DecodeExecution(data []byte) (*Execution, error) {
	var e Execution
	if decodeCanonicalExecution(data, &e) {
		return &e, nil
	}
	if err := json.Unmarshal(data, &e); err != nil {
		return nil, err
	}
	return &e, nil
}

// decodeCanonicalExecution sets *out from data when data is an execution
// in the canonical form with every contract field of its type, and says
// whether it did; out is left as it was when it did not.
func decodeCanonicalExecution(data []byte, out *Execution) bool {
	var e Execution
	if !canonicalMembers(data, e.setMember) {
		return false
	}
	*out = e
	return true
}

// setMember sets the field key names to v, a canonical JSON value, and says
// whether it could: false where the general path must decide (a contract
// field of the wrong type, a version that is no int64, a context that is no
// canonical object).
func (e *Execution) setMember(key, v []byte) bool {
	switch string(key) {
	case "active_path":
		return plainString(v, &e.ActivePath)
	case "context":
		if string(v) == "null" {
			return true
		}
		if v[0] != '{' { // the scan has found v canonical: an object is all it must be
			return false
		}
		e.Context = append(json.RawMessage(nil), v...)
		return true
	case "definition_id":
		return plainString(v, &e.DefinitionID)
	case "id":
		return plainString(v, &e.ID)
	case "outcome":
		return nullableString(v, &e.Outcome)
	case "parent_id":
		return nullableString(v, &e.ParentID)
	case "status":
		return plainString(v, &e.Status)
	case "version":
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return false
		}
		e.Version = n
		return true
	}
	if e.Extra == nil {
		e.Extra = make(map[string]json.RawMessage)
	}
	e.Extra[string(key)] = append(json.RawMessage(nil), v...)
	return true
}

// plainString sets *dst to the string v holds, when v is one; the canonical
// scan has checked it holds no escapes.
func plainString(v []byte, dst *string) bool {
	if len(v) < 2 || v[0] != '"' {
		return false
	}
	*dst = string(v[1 : len(v)-1])
	return true
}

// nullableString sets *dst to nil for null, or to the string v holds.
func nullableString(v []byte, dst **string) bool {
	if string(v) == "null" {
		*dst = nil
		return true
	}
	var s string
	if !plainString(v, &s) {
		return false
	}
	*dst = &s
	return true
}
