package model

import (
	"bytes"
	"unicode/utf8"

	"github.com/storecheck/storecheck/internal/jsonnum"
)

// alreadyCanonical reports whether b is, byte for byte, what CanonicalJSON
// would make of it: compact, object keys strictly ascending (so no
// duplicates), strings that need no escaping, numbers as the grammar has
// them. It is CanonicalJSON's fast path — documents read back from a store
// are canonical already, and decoding and re-encoding them is most of what
// recording a history costs. It answers false whenever it is unsure (any
// escape sequence, say), leaving the document to the slow path.
func alreadyCanonical(b []byte) bool {
	p := canonScan{b: b}
	return p.value(0) && p.i == len(b)
}

// maxCanonDepth bounds the nesting the fast path follows.
const maxCanonDepth = 64

type canonScan struct {
	b []byte
	i int
}

func (p *canonScan) peek() byte {
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func (p *canonScan) value(depth int) bool {
	if depth > maxCanonDepth {
		return false
	}
	switch c := p.peek(); {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		_, ok := p.str()
		return ok
	case c == 't':
		return p.lit("true")
	case c == 'f':
		return p.lit("false")
	case c == 'n':
		return p.lit("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return false
}

func (p *canonScan) object(depth int) bool {
	return p.members(depth, nil)
}

// canonicalMembers calls member with each key of data and its value's
// bytes when data is one object in the canonical form with nothing around
// it; false when it is not, or member refuses one.
func canonicalMembers(data []byte, member func(key, value []byte) bool) bool {
	p := canonScan{b: data}
	return p.peek() == '{' && p.members(0, member) && p.i == len(data)
}

// members moves past an object in the canonical form, keys strictly
// ascending, and calls member, when set, with each key and its value's
// bytes; false when the object is not in that form or member refuses.
func (p *canonScan) members(depth int, member func(key, value []byte) bool) bool {
	p.i++ // {
	if p.peek() == '}' {
		p.i++
		return true
	}
	var prev []byte
	for first := true; ; first = false {
		key, ok := p.str()
		if !ok || (!first && bytes.Compare(key, prev) <= 0) {
			return false
		}
		prev = key
		if p.peek() != ':' {
			return false
		}
		p.i++
		start := p.i
		if !p.value(depth + 1) {
			return false
		}
		if member != nil && !member(key, p.b[start:p.i]) {
			return false
		}
		switch p.peek() {
		case ',':
			p.i++
		case '}':
			p.i++
			return true
		default:
			return false
		}
	}
}

func (p *canonScan) array(depth int) bool {
	p.i++ // [
	if p.peek() == ']' {
		p.i++
		return true
	}
	for {
		if !p.value(depth + 1) {
			return false
		}
		switch p.peek() {
		case ',':
			p.i++
		case ']':
			p.i++
			return true
		default:
			return false
		}
	}
}

// str reads a string with no escapes, no control characters, valid UTF-8
// and no U+2028/U+2029 (which the encoder escapes), and returns its bytes.
func (p *canonScan) str() ([]byte, bool) {
	if p.peek() != '"' {
		return nil, false
	}
	start := p.i + 1
	ascii := true // then valid UTF-8, and neither U+2028 nor U+2029
	for j := start; j < len(p.b); j++ {
		switch c := p.b[j]; {
		case c == '"':
			s := p.b[start:j]
			if !ascii && (!utf8.Valid(s) || bytes.Contains(s, []byte("\u2028")) || bytes.Contains(s, []byte("\u2029"))) {
				return nil, false
			}
			p.i = j + 1
			return s, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

func (p *canonScan) lit(s string) bool {
	if !bytes.HasPrefix(p.b[p.i:], []byte(s)) {
		return false
	}
	p.i += len(s)
	return true
}

// number moves past a JSON number (jsonnum.End), if one comes next.
func (p *canonScan) number() bool {
	end := jsonnum.End(p.b, p.i)
	if end < 0 {
		return false
	}
	p.i = end
	return true
}

// TopLevelStringBytes reads the top-level string field key of a document
// in the fast path's form — compact, no escapes — with the fast path's
// scanner, and no decode: the string's bytes within doc (the caller must
// not change doc while it uses them), nil when the document is no object,
// has no such field, or the field is no string. sure is false wherever the
// scanner is unsure (whitespace, an escape anywhere before the field or in
// it, anything malformed); the caller must then decode the document
// instead.
func TopLevelStringBytes(doc []byte, key string) (val []byte, sure bool) {
	p := canonScan{b: doc}
	if p.peek() != '{' {
		return nil, len(doc) > 0
	}
	p.i++
	if p.peek() == '}' {
		return nil, true
	}
	for {
		name, ok := p.str()
		if !ok || p.peek() != ':' {
			return nil, false
		}
		p.i++
		if string(name) == key {
			if p.peek() == '"' {
				return p.str()
			}
			return nil, p.value(1)
		}
		if !p.value(1) {
			return nil, false
		}
		switch p.peek() {
		case ',':
			p.i++
		case '}':
			return nil, true
		default:
			return nil, false
		}
	}
}
