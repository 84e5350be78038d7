package model

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// CanonicalJSON re-encodes a JSON document with object keys sorted, no
// insignificant whitespace and numbers kept verbatim, so that two documents that
// mean the same compare equal as strings. Backends in other languages serialise
// differently; tables are compared in this form.
func CanonicalJSON(raw []byte) (string, error) {
	b, err := CanonicalJSONBytes(raw)
	return string(b), err
}

// CanonicalJSONBytes is CanonicalJSON as bytes: raw itself, not a copy,
// when it is canonical already (the caller must not change it while it
// uses the result), else a new encoding.
func CanonicalJSONBytes(raw []byte) ([]byte, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, fmt.Errorf("canonical json: empty document")
	}
	if alreadyCanonical(raw) {
		return raw, nil
	}
	return canonicalSlow(raw)
}

// canonicalSlow decodes and re-encodes: the definition of the canonical
// form, which alreadyCanonical only short-cuts.
func canonicalSlow(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("canonical json: trailing data after document")
	}
	out, err := marshalNoEscape(v)
	if err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	return out, nil
}

// CanonicalObject is CanonicalJSON for values that must be JSON objects
// (contexts, trace entries). A nil or empty value stands for {}. Errors
// start with what, which names the value ("trace entry").
func CanonicalObject(raw json.RawMessage, what string) (string, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "{}", nil
	}
	s, err := CanonicalJSON(raw)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	if s == "" || s[0] != '{' {
		return "", fmt.Errorf("%s: must be a JSON object, got %.40s", what, s)
	}
	return s, nil
}

// canonicalObjectInPlace reports whether raw is already a canonical JSON
// object with nothing around it, and returns it as it is: what
// CanonicalObject would return, without copying it into a string.
func canonicalObjectInPlace(raw json.RawMessage) ([]byte, bool) {
	if len(raw) == 0 || raw[0] != '{' || !alreadyCanonical(raw) {
		return nil, false
	}
	return raw, true
}

// marshalNoEscape is json.Marshal without HTML escaping, so that '<', '>' and
// '&' survive a round trip through any other language's encoder unchanged.
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
