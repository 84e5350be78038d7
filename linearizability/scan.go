package linearizability

import (
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/storecheck/storecheck/internal/jsonnum"
)

// scanner reads one JSON line in place, value by value, for lineDecoder:
// no parse tree, no copy of a string that has no escape in it. It takes
// only what it can decode exactly as encoding/json would, and marks
// anything else bad (a structure that is not JSON, a value of the wrong
// type, an escape written \uXXXX, invalid UTF-8, a raw control character,
// an integer that overflows): the decoder then hands the line to
// encoding/json, whose answer — a value or the words of its refusal — is
// the one that counts. A reader that meets null consumes it and reports
// it, so that the caller leaves its field as encoding/json leaves it.
type scanner struct {
	b   []byte
	i   int
	esc []byte // the unescaped strings of this line, side by side
	bad bool
}

// reset starts on line b.
func (s *scanner) reset(b []byte) {
	s.b, s.i, s.esc, s.bad = b, 0, s.esc[:0], false
	s.ws()
}

// end marks the line bad unless only whitespace is left.
func (s *scanner) end() {
	s.ws()
	if s.i != len(s.b) {
		s.bad = true
	}
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// next consumes c if it comes next.
func (s *scanner) next(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// literal consumes word if it comes next.
func (s *scanner) literal(word string) bool {
	if len(s.b)-s.i >= len(word) && string(s.b[s.i:s.i+len(word)]) == word {
		s.i += len(word)
		return true
	}
	return false
}

// object calls field with each member's key, positioned at its value,
// which field must read (or mark the line bad). null is an object with no
// members, as encoding/json leaves a struct alone for null.
func (s *scanner) object(field func(key []byte)) {
	if s.bad || s.literal("null") {
		return
	}
	if !s.next('{') {
		s.bad = true
		return
	}
	s.ws()
	if s.next('}') {
		return
	}
	for !s.bad {
		key, ok := s.key()
		s.ws()
		if !ok || !s.next(':') {
			s.bad = true
			return
		}
		s.ws()
		field(key)
		s.ws()
		switch {
		case s.next(','):
			s.ws()
		case s.next('}'):
			return
		default:
			s.bad = true
		}
	}
}

// key reads a member's name: a string with no escape and nothing but
// printable ASCII (every name storecheck writes; any other goes to
// encoding/json, which matches names without regard to case or escapes).
func (s *scanner) key() ([]byte, bool) {
	if !s.next('"') {
		return nil, false
	}
	for j := s.i; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			k := s.b[s.i:j]
			s.i = j + 1
			return k, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, false
		}
	}
	return nil, false
}

// array calls elem at each element, which elem must read; false if the
// value is null.
func (s *scanner) array(elem func()) bool {
	if s.bad {
		return true
	}
	if s.literal("null") {
		return false
	}
	if !s.next('[') {
		s.bad = true
		return true
	}
	s.ws()
	if s.next(']') {
		return true
	}
	for !s.bad {
		elem()
		s.ws()
		switch {
		case s.next(','):
			s.ws()
		case s.next(']'):
			return true
		default:
			s.bad = true
		}
	}
	return true
}

// special marks the bytes a string's fast loop stops at: the quote, the
// backslash, control characters and the bytes of non-ASCII characters.
var special = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	for c := 0x80; c < 0x100; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// str reads a string's bytes, valid until the next line; false for null
// (or a bad line).
func (s *scanner) str() ([]byte, bool) {
	if s.bad || s.literal("null") {
		return nil, false
	}
	if !s.next('"') {
		s.bad = true
		return nil, false
	}
	start, high := s.i, false
	for j := start; j < len(s.b); j++ {
		c := s.b[j]
		if !special[c] {
			continue
		}
		switch {
		case c == '"':
			s.i = j + 1
			if high && !utf8.Valid(s.b[start:j]) {
				s.bad = true // encoding/json replaces invalid bytes
				return nil, false
			}
			return s.b[start:j], true
		case c == '\\':
			return s.unescape(start, j)
		case c < 0x20:
			s.bad = true
			return nil, false
		default:
			high = true
		}
	}
	s.bad = true
	return nil, false
}

// unescape reads the rest of a string whose first escape is at j, into
// s.esc (which only grows within a line, so earlier strings stay valid).
func (s *scanner) unescape(start, j int) ([]byte, bool) {
	from := len(s.esc)
	s.esc = append(s.esc, s.b[start:j]...)
	for ; j < len(s.b); j++ {
		c := s.b[j]
		switch {
		case c == '"':
			s.i = j + 1
			out := s.esc[from:len(s.esc):len(s.esc)]
			if !utf8.Valid(out) {
				s.bad = true
				return nil, false
			}
			return out, true
		case c < 0x20:
			s.bad = true
			return nil, false
		case c != '\\':
			s.esc = append(s.esc, c)
			continue
		}
		if j++; j == len(s.b) {
			break
		}
		switch s.b[j] {
		case '"', '\\', '/':
			s.esc = append(s.esc, s.b[j])
		case 'b':
			s.esc = append(s.esc, '\b')
		case 'f':
			s.esc = append(s.esc, '\f')
		case 'n':
			s.esc = append(s.esc, '\n')
		case 'r':
			s.esc = append(s.esc, '\r')
		case 't':
			s.esc = append(s.esc, '\t')
		default: // \uXXXX (surrogates are encoding/json's to decode) or no escape at all
			s.bad = true
			return nil, false
		}
	}
	s.bad = true
	return nil, false
}

// int64 reads an integer: -?(0|[1-9][0-9]*) that fits; false for null.
// A fraction or an exponent is bad: encoding/json refuses it for an
// integer field.
func (s *scanner) int64() (int64, bool) {
	if s.bad || s.literal("null") {
		return 0, false
	}
	neg := s.next('-')
	start := s.i
	var n uint64
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		if n > (1<<63)/10 {
			s.bad = true
			return 0, false
		}
		n = n*10 + uint64(s.b[s.i]-'0')
		s.i++
	}
	digits := s.i - start
	switch {
	case digits == 0, digits > 1 && s.b[start] == '0', n > 1<<63, n == 1<<63 && !neg,
		s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E'):
		s.bad = true
		return 0, false
	case neg:
		return -int64(n), true
	}
	return int64(n), true
}

// float64 reads a number, correctly rounded as strconv (and encoding/json)
// round it; false for null.
func (s *scanner) float64() (float64, bool) {
	if s.bad || s.literal("null") {
		return 0, false
	}
	start := s.i
	if !s.number() {
		s.bad = true
		return 0, false
	}
	text := s.b[start:s.i]
	f, err := strconv.ParseFloat(unsafe.String(&text[0], len(text)), 64)
	if err != nil {
		s.bad = true // out of range: encoding/json refuses it too
		return 0, false
	}
	return f, true
}

// number moves past a JSON number (jsonnum.End), if one comes next.
func (s *scanner) number() bool {
	end := jsonnum.End(s.b, s.i)
	if end < 0 {
		return false
	}
	s.i = end
	return true
}

// bool reads true or false; false, false for null.
func (s *scanner) bool() (v, ok bool) {
	switch {
	case s.bad, s.literal("null"):
		return false, false
	case s.literal("true"):
		return true, true
	case s.literal("false"):
		return false, true
	}
	s.bad = true
	return false, false
}
