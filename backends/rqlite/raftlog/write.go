package raftlog

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Write writes entries into a new raft-boltdb file at path, encoded as
// raft-boltdb encodes hashicorp/raft's Log (a msgpack map of its six
// fields; AppendedAt as a timestamp extension of zeros): the fixtures of
// the comparison's tests, and logs made by hand to try it on.
func Write(path string, entries []Entry) error {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: openTimeout})
	if err != nil {
		return fmt.Errorf("raftlog: create %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(logsBucket)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := b.Put(binary.BigEndian.AppendUint64(nil, e.Index), encodeLog(e)); err != nil {
				return err
			}
		}
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("raftlog: write %s: %w", path, err)
	}
	return nil
}

// encodeLog encodes an entry as go-msgpack writes hashicorp/raft's Log.
func encodeLog(e Entry) []byte {
	b := []byte{0x86}
	b = putUint(putRaw(b, "Index"), e.Index)
	b = putUint(putRaw(b, "Term"), e.Term)
	b = putUint(putRaw(b, "Type"), uint64(e.Type))
	b = putRaw(putRaw(b, "Data"), string(e.Data))
	b = append(putRaw(b, "Extensions"), 0xc0)
	b = append(putRaw(b, "AppendedAt"), 0xd7, 0xff, 0, 0, 0, 0, 0, 0, 0, 0)
	return b
}

// putUint appends v as a msgpack unsigned integer.
func putUint(b []byte, v uint64) []byte {
	switch {
	case v <= 0x7f:
		return append(b, byte(v))
	case v <= 0xff:
		return append(b, 0xcc, byte(v))
	case v <= 0xffff:
		return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(v))
	case v <= 0xffffffff:
		return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(v))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xcf), v)
}

// putRaw appends s as a msgpack raw string (the old spec's, which
// go-msgpack writes for []byte and string alike).
func putRaw(b []byte, s string) []byte {
	switch n := len(s); {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n <= 0xffff:
		b = binary.BigEndian.AppendUint16(append(b, 0xda), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, 0xdb), uint32(n))
	}
	return append(b, s...)
}
