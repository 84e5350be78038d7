package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Conflict is the detail of a KindConflict error.
type Conflict struct {
	ExecutionID string `json:"execution_id"`
	Expected    int64  `json:"expected"`
	Found       *int64 `json:"found"` // null: no row
}

// errorHead is the part of every error.
type errorHead struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// MarshalJSON writes the conflict fields only for a conflict, found as null
// when there is no row.
func (e Error) MarshalJSON() ([]byte, error) {
	if e.Kind != KindConflict {
		return Marshal(errorHead{e.Kind, e.Message})
	}
	return Marshal(struct {
		errorHead
		Conflict
	}{errorHead{e.Kind, e.Message}, Conflict{e.ExecutionID, e.Expected, e.Found}})
}

// Marshal encodes v on one line without HTML escaping, so that text
// survives a round trip through any other language unchanged.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// EncodeRequest returns the request's line, newline included. args may be
// nil for operations without arguments.
func EncodeRequest(id uint64, op string, args any) ([]byte, error) {
	raw := json.RawMessage("{}")
	if args != nil {
		b, err := Marshal(args)
		if err != nil {
			return nil, fmt.Errorf("encode %s args: %w", op, err)
		}
		raw = b
	}
	line, err := Marshal(Request{ID: id, Op: op, Args: raw})
	if err != nil {
		return nil, fmt.Errorf("encode %s request: %w", op, err)
	}
	return append(line, '\n'), nil
}

// DecodeRequest parses one request line.
func DecodeRequest(line []byte) (Request, error) {
	var r Request
	if err := Decode(line, &r); err != nil {
		return Request{}, err
	}
	if len(r.Args) == 0 || isNull(r.Args) {
		r.Args = json.RawMessage("{}")
	}
	return r, nil
}

// OKResponse returns the line answering request id with result (nil for
// operations that return nothing), newline included.
func OKResponse(id uint64, result any) ([]byte, error) {
	raw := json.RawMessage("null")
	if result != nil {
		b, err := Marshal(result)
		if err != nil {
			return nil, fmt.Errorf("encode result of request %d: %w", id, err)
		}
		raw = b
	}
	line, err := Marshal(Response{ID: id, OK: true, Result: raw})
	if err != nil {
		return nil, err
	}
	return append(line, '\n'), nil
}

// ErrorResponse returns the line failing request id with e, newline included.
func ErrorResponse(id uint64, e Error) ([]byte, error) {
	line, err := Marshal(Response{ID: id, Error: &e})
	if err != nil {
		return nil, err
	}
	return append(line, '\n'), nil
}

// DecodeResponse parses one response line strictly: an object with id and
// ok; result when ok (null included), otherwise an error of a known kind,
// with execution_id, expected and found for a conflict.
func DecodeResponse(line []byte) (Response, error) {
	var head struct {
		ID     uint64          `json:"id"`
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result,omitempty"`
		Error  json.RawMessage `json:"error,omitempty"`
	}
	if err := Decode(line, &head); err != nil {
		return Response{}, err
	}
	r := Response{ID: head.ID, OK: head.OK, Result: head.Result}
	if r.OK {
		if r.Result == nil {
			return Response{}, fmt.Errorf(`"ok": true without "result"`)
		}
		return r, nil
	}
	if head.Error == nil || isNull(head.Error) {
		return Response{}, fmt.Errorf(`"ok": false without "error"`)
	}
	var e errorHead
	if err := Decode(head.Error, &e); err != nil {
		return Response{}, fmt.Errorf("error: %w", err)
	}
	r.Error = &Error{Kind: e.Kind, Message: e.Message}
	switch e.Kind {
	case KindNotApplied, KindInvalidArgument, KindUnknown:
	case KindConflict:
		var c Conflict
		if err := Decode(head.Error, &c); err != nil {
			return Response{}, fmt.Errorf("conflict: %w", err)
		}
		r.Error.ExecutionID, r.Error.Expected, r.Error.Found = c.ExecutionID, c.Expected, c.Found
	default:
		return Response{}, fmt.Errorf("unknown error kind %q (want %s, %s, %s or %s)", e.Kind, KindConflict, KindNotApplied, KindInvalidArgument, KindUnknown)
	}
	return r, nil
}
