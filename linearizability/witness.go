package linearizability

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"strings"
	"sync"

	"github.com/storecheck/storecheck/model"
)

// Witness fields: top-level string fields of a JSON object (an execution,
// a trace entry) that a workload sets so that every stored row names the one
// attempt that wrote it.
const (
	// TokenField holds a token unique to one write attempt.
	TokenField = "token"
	// PrevField, in an execution, holds the token of the execution the
	// writer believes is stored at the version it commits from.
	PrevField = "prev"
)

// ObjectID identifies a JSON object by its witness token and a hash of its
// canonical form: "<token>#<hash>", or "#<hash>" without a token. The token
// makes histories readable and maps rows to attempts; the hash catches a
// store that returns a different object under the same token.
//
// It is on the recorder's hot path (each entry of every trace read), so
// a canonical document is hashed where it lies and its token read by the
// canonical form's scanner (model.TopLevelStringBytes), with no decode.
func ObjectID(raw []byte) (string, error) {
	canon, err := model.CanonicalJSONBytes(raw)
	if err != nil {
		return "", err
	}
	if token, ok := model.TopLevelStringBytes(canon, TokenField); ok {
		return tokenHash(token, idHash(canon)), nil
	}
	token, _, err := witnessFields(string(canon))
	if err != nil {
		return "", err
	}
	return tokenHash(token, idHash(canon)), nil
}

// DataID is the ObjectID of an execution as stored: its canonical JSON at
// exe.Version.
//
// It is on the recorder's hot path (every load and commit), so it reads the
// canonical form straight from Execution.AppendJSON, which writes canonical
// JSON already, and the token straight from Extra, with no decode and
// re-encode.
func DataID(exe *model.Execution) (string, error) {
	buf := encodeBuffers.Get().(*[]byte)
	defer encodeBuffers.Put(buf)
	raw, err := exe.AppendJSON((*buf)[:0])
	if err != nil {
		return "", fmt.Errorf("encode execution %q: %w", exe.ID, err)
	}
	*buf = raw
	if token, ok := plainExtraString(exe, TokenField); ok {
		return tokenHash(token, idHash(raw)), nil
	}
	return tokenHash(extraString(exe, TokenField), idHash(raw)), nil
}

// encodeBuffers hold the bytes DataID hashes: each call's encoding is
// dropped once hashed, so its buffer serves the next call.
var encodeBuffers = sync.Pool{New: func() any { return new([]byte) }}

// extraString reads a top-level string field an execution carries in Extra.
func extraString(exe *model.Execution, key string) string {
	if s, ok := plainExtraString(exe, key); ok {
		return string(s)
	}
	var s string
	if json.Unmarshal(exe.Extra[key], &s) != nil {
		return ""
	}
	return s
}

// plainExtraString reads the string field key of exe's Extra in place: its
// bytes between the quotes when they are the string itself, as witness
// tokens are (no escapes), or nothing when exe has no such field. It
// answers false when the field must be decoded.
func plainExtraString(exe *model.Execution, key string) ([]byte, bool) {
	v, ok := exe.Extra[key]
	if !ok {
		return nil, true
	}
	if n := len(v); n >= 2 && v[0] == '"' && v[n-1] == '"' && plain(v[1:n-1]) {
		return v[1 : n-1], true
	}
	return nil, false
}

// idHash is the hash part of an ObjectID or DataID: CRC-32C of the
// canonical bytes, which the CPU computes in hardware where it can (a
// byte-at-a-time hash was a fifth of the recorder's own time). The ids
// of one history are all made by one build, and the checker only compares
// them, so a history recorded with another hash checks the same.
func idHash(b []byte) uint32 { return crc32.Update(0, castagnoli, b) }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// tokenHash formats "<token>#<h>", h as eight lower-case hex digits (like
// "%s#%08x"), in one allocation.
func tokenHash[T ~string | ~[]byte](token T, h uint32) string {
	const digits = "0123456789abcdef"
	hash := [9]byte{'#'}
	for i := len(hash) - 1; i > 0; i-- {
		hash[i] = digits[h&0xf]
		h >>= 4
	}
	return string(token) + string(hash[:])
}

// Token returns the witness token of an id made by ObjectID or DataID; ""
// when the object had none.
func Token(id string) string {
	if i := strings.LastIndexByte(id, '#'); i >= 0 {
		return id[:i]
	}
	return id
}

// short is how describe functions show an id: its token, else its hash.
func short(id string) string {
	if t := Token(id); t != "" {
		return t
	}
	return id
}

// witnessFields reads the top-level token and prev strings of a JSON object;
// either may be absent. A non-object has neither.
func witnessFields(canon string) (token, prev string, err error) {
	if !strings.HasPrefix(canon, "{") {
		return "", "", nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(canon), &fields); err != nil {
		return "", "", fmt.Errorf("witness fields: %w", err)
	}
	read := func(key string) string {
		var s string
		if v, ok := fields[key]; ok && json.Unmarshal(v, &s) == nil {
			return s
		}
		return ""
	}
	return read(TokenField), read(PrevField), nil
}

// plain says whether b is printable ASCII without quotes or backslashes:
// the JSON string "b" decodes to b itself.
func plain(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// strHash is 64-bit FNV-1a: deterministic across processes, no allocation.
func strHash[T ~string | ~[]byte](s T) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// mix folds v into h (a step of a 64-bit multiply-xorshift hash).
func mix(h, v uint64) uint64 {
	h ^= v + 0x9e3779b97f4a7c15 + (h << 6) + (h >> 2)
	h *= 0xff51afd7ed558ccd
	return h ^ (h >> 33)
}
