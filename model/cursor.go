package model

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

// The seeds page list_executions by offset behind an opaque cursor. These
// helpers are the encoding the reference model and the SQL backends share;
// other backends may issue any cursor they like, and the conformance suite only
// ever hands a store back a cursor that store issued.

const cursorPrefix = "off:"

// EncodeOffsetCursor returns the opaque cursor for the row at offset off.
func EncodeOffsetCursor(off int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.Itoa(off)))
}

// DecodeOffsetCursor reads a cursor made by EncodeOffsetCursor; "" is offset 0.
func DecodeOffsetCursor(c string) (int, error) {
	if c == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !strings.HasPrefix(string(b), cursorPrefix) {
		return 0, fmt.Errorf("%w: cursor %q was not issued by this store", ErrInvalidArgument, c)
	}
	off, err := strconv.Atoi(strings.TrimPrefix(string(b), cursorPrefix))
	if err != nil || off < 0 {
		return 0, fmt.Errorf("%w: cursor %q was not issued by this store", ErrInvalidArgument, c)
	}
	return off, nil
}

// CheckLimit rejects page sizes below 1.
func CheckLimit(limit int) error {
	if limit < 1 {
		// Decision: the seeds never pass a limit below 1; we reject it rather
		// than guess whether 0 means "none" or "all".
		return fmt.Errorf("%w: page limit must be at least 1, got %d", ErrInvalidArgument, limit)
	}
	return nil
}
