package raftlog

import (
	"errors"
	"fmt"
)

// raft-boltdb stores each entry as hashicorp/raft's Log encoded by
// go-msgpack's MsgpackHandle: a map from field name to value. The reader
// below takes the four fields the comparison needs (Index, Term, Type, Data)
// and steps over the rest (Extensions, AppendedAt) whatever their encoding.

// decodeLog decodes one stored entry.
func decodeLog(b []byte) (Entry, error) {
	r := &reader{b: b}
	n, err := r.mapLen()
	if err != nil {
		return Entry{}, err
	}
	var e Entry
	for range n {
		key, err := r.bytes()
		if err != nil {
			return Entry{}, fmt.Errorf("field name: %w", err)
		}
		switch string(key) {
		case "Index":
			e.Index, err = r.uint()
		case "Term":
			e.Term, err = r.uint()
		case "Type":
			var t uint64
			t, err = r.uint()
			e.Type = uint8(t)
		case "Data":
			var data []byte
			data, err = r.bytesOrNil()
			e.Data = append([]byte(nil), data...) // b is the file's memory map, gone on Close
		default:
			err = r.skip()
		}
		if err != nil {
			return Entry{}, fmt.Errorf("field %s: %w", key, err)
		}
	}
	return e, nil
}

var errShort = errors.New("msgpack: value runs past the end")

// reader reads msgpack values from b.
type reader struct {
	b []byte
	i int
}

func (r *reader) byte() (byte, error) {
	if r.i >= len(r.b) {
		return 0, errShort
	}
	c := r.b[r.i]
	r.i++
	return c, nil
}

// n reads an n-byte big-endian unsigned number.
func (r *reader) n(size int) (uint64, error) {
	if r.i+size > len(r.b) {
		return 0, errShort
	}
	var v uint64
	for _, c := range r.b[r.i : r.i+size] {
		v = v<<8 | uint64(c)
	}
	r.i += size
	return v, nil
}

func (r *reader) take(size uint64) ([]byte, error) {
	if size > uint64(len(r.b)-r.i) {
		return nil, errShort
	}
	out := r.b[r.i : r.i+int(size)]
	r.i += int(size)
	return out, nil
}

func (r *reader) mapLen() (uint64, error) {
	c, err := r.byte()
	switch {
	case err != nil:
		return 0, err
	case c >= 0x80 && c <= 0x8f:
		return uint64(c & 0x0f), nil
	case c == 0xde:
		return r.n(2)
	case c == 0xdf:
		return r.n(4)
	}
	return 0, fmt.Errorf("msgpack: want a map, got 0x%02x", c)
}

func (r *reader) uint() (uint64, error) {
	c, err := r.byte()
	switch {
	case err != nil:
		return 0, err
	case c <= 0x7f:
		return uint64(c), nil
	case c >= 0xcc && c <= 0xcf:
		return r.n(1 << (c - 0xcc))
	case c >= 0xd0 && c <= 0xd3: // a signed encoding of a non-negative value
		v, err := r.n(1 << (c - 0xd0))
		return v, err
	}
	return 0, fmt.Errorf("msgpack: want an unsigned integer, got 0x%02x", c)
}

// bytes reads a string or binary value (go-msgpack writes []byte as
// either, depending on its settings).
func (r *reader) bytes() ([]byte, error) {
	c, err := r.byte()
	if err != nil {
		return nil, err
	}
	size, ok, err := r.rawSize(c)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("msgpack: want bytes, got 0x%02x", c)
	}
	return r.take(size)
}

func (r *reader) bytesOrNil() ([]byte, error) {
	if r.i < len(r.b) && r.b[r.i] == 0xc0 {
		r.i++
		return nil, nil
	}
	return r.bytes()
}

// rawSize reads the length of a string or binary value whose type byte is
// c; ok is false when c is neither.
func (r *reader) rawSize(c byte) (uint64, bool, error) {
	switch {
	case c >= 0xa0 && c <= 0xbf:
		return uint64(c & 0x1f), true, nil
	case c == 0xc4 || c == 0xd9:
		v, err := r.n(1)
		return v, true, err
	case c == 0xc5 || c == 0xda:
		v, err := r.n(2)
		return v, true, err
	case c == 0xc6 || c == 0xdb:
		v, err := r.n(4)
		return v, true, err
	}
	return 0, false, nil
}

// skip steps over one value of any type.
func (r *reader) skip() error {
	c, err := r.byte()
	if err != nil {
		return err
	}
	if size, ok, err := r.rawSize(c); ok || err != nil {
		if err != nil {
			return err
		}
		_, err = r.take(size)
		return err
	}
	var items uint64 // values (array) or keys and values (map) to skip
	switch {
	case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
		return nil
	case c >= 0x80 && c <= 0x8f:
		items = 2 * uint64(c&0x0f)
	case c >= 0x90 && c <= 0x9f:
		items = uint64(c & 0x0f)
	case c == 0xdc || c == 0xdd:
		items, err = r.n(2 << (c - 0xdc))
	case c == 0xde || c == 0xdf:
		items, err = r.n(2 << (c - 0xde))
		items *= 2
	case c == 0xca:
		_, err = r.take(4)
	case c == 0xcb:
		_, err = r.take(8)
	case c >= 0xcc && c <= 0xcf:
		_, err = r.take(1 << (c - 0xcc))
	case c >= 0xd0 && c <= 0xd3:
		_, err = r.take(1 << (c - 0xd0))
	case c >= 0xd4 && c <= 0xd8: // fixext: a type byte and 1, 2, 4, 8 or 16 bytes
		_, err = r.take(1 + 1<<(c-0xd4))
	case c >= 0xc7 && c <= 0xc9: // ext 8, 16, 32: a length, a type byte, the bytes
		var size uint64
		if size, err = r.n(1 << (c - 0xc7)); err == nil {
			_, err = r.take(1 + size)
		}
	default:
		return fmt.Errorf("msgpack: unknown type byte 0x%02x", c)
	}
	if err != nil {
		return err
	}
	for range items {
		if err := r.skip(); err != nil {
			return err
		}
	}
	return nil
}
