package linearizability

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/valyala/fastjson"
)

// Reading a large history is mostly decoding its lines. encoding/json
// reflects over Operation for every line and allocates every string
// anew, though a history repeats the same few thousand execution ids,
// event ids and trace entries over and over (a read_trace lists up to 200
// entries, each already seen). lineDecoder decodes the lines storecheck
// writes without reflection and keeps one copy of each repeated string;
// a line it cannot take that way exactly as encoding/json would (an
// escape written \uXXXX, invalid UTF-8) goes through encoding/json, and
// so does every line it finds wrong: what is refused, and the words it is
// refused in, are encoding/json's.

// lineDecoder decodes operation lines; each decoding goroutine has its own
// (its parser and its strings are not shared).
type lineDecoder struct {
	p fastjson.Parser
	// strs holds one copy of each string seen, up to maxInterned; then it
	// starts again, so that its memory is bounded whatever the history.
	strs map[string]string
	// traces holds each execution's trace entries seen so far, by index
	// (traceItems' log); listing is traceItems' scratch.
	traces  map[string]*traceLog
	listing []TraceItem
	// outbox and spawns are the last pending listings (outboxItems).
	outbox []OutboxItem
	spawns []SpawnItem
	err    error  // the first error of the line being decoded
	num    []byte // a number's text, for strconv
	// slow counts the lines handed to encoding/json.
	slow int
}

// maxInterned bounds lineDecoder.strs.
const maxInterned = 1 << 20

func newLineDecoder() *lineDecoder {
	return &lineDecoder{strs: make(map[string]string), traces: make(map[string]*traceLog)}
}

// decode decodes one operation line into op as strictUnmarshal does
// (encoding/json, unknown fields disallowed).
func (d *lineDecoder) decode(raw []byte, op *Operation) error {
	// fastjson's parser is strict about structure and literals but not
	// about strings (raw control characters, unknown escapes) or numbers
	// (01, +1, NaN): plainText refuses the first, and every number read
	// is checked against JSON's grammar (number, integer).
	if !plainText(raw) {
		return d.slowly(raw, op)
	}
	v, err := d.p.ParseBytes(raw)
	if err != nil {
		return d.slowly(raw, op)
	}
	d.err = nil
	d.object(v, []byte("operation"), func(key []byte, v *fastjson.Value) {
		switch string(key) {
		case "client":
			op.Client = int(d.int64(v, key))
		case "kind":
			op.Kind = Kind(d.str(v, key))
		case "execution":
			op.Execution = d.str(v, key)
		case "input":
			d.input(v, &op.Input)
		case "output":
			d.output(v, &op.Output, op.Execution)
		case "call_ns":
			op.Call = d.int64(v, key)
		case "return_ns":
			op.Return = d.int64(v, key)
		case "heal":
			op.Heal = d.bool(v, key)
		case "replica":
			op.Replica = d.str(v, key)
		case "ryw":
			op.ReadYourWrites = d.bool(v, key)
		default:
			d.unknown(key)
		}
	})
	if d.err != nil {
		*op = Operation{}
		return d.slowly(raw, op)
	}
	return nil
}

// slowly decodes raw with encoding/json.
func (d *lineDecoder) slowly(raw []byte, op *Operation) error {
	d.slow++
	return strictUnmarshal(raw, op)
}

func (d *lineDecoder) input(v *fastjson.Value, in *Input) {
	d.object(v, []byte("input"), func(key []byte, v *fastjson.Value) {
		switch string(key) {
		case "expected":
			in.Expected = d.int64(v, key)
		case "data":
			in.Data = d.plain(v, key)
		case "prev":
			in.Prev = d.plain(v, key)
		case "event_id":
			in.EventID = d.plain(v, key)
		case "emits":
			in.Emits = decodeArray(d, v, key, func(v *fastjson.Value, e *EmitRef) {
				d.object(v, key, func(key []byte, v *fastjson.Value) {
					switch string(key) {
					case "event_id":
						e.EventID = d.plain(v, key)
					case "target":
						e.Target = d.strPtr(v, key)
					default:
						d.unknown(key)
					}
				})
			})
		case "timers":
			in.Timers = decodeArray(d, v, key, func(v *fastjson.Value, t *TimerRef) {
				d.object(v, key, func(key []byte, v *fastjson.Value) {
					switch string(key) {
					case "action":
						t.Action = d.str(v, key)
					case "path":
						t.Path = d.str(v, key)
					case "fire_at":
						t.FireAt = d.float64(v, key)
					default:
						d.unknown(key)
					}
				})
			})
		case "spawns":
			in.Spawns = decodeArray(d, v, key, func(v *fastjson.Value, s *string) { *s = d.str(v, key) })
		case "trace":
			in.Trace = d.plain(v, key)
		case "seq":
			in.Seq = d.int64(v, key)
		case "path":
			in.Path = d.str(v, key)
		case "fire_at":
			in.FireAt = d.float64(v, key)
		case "now":
			in.Now = d.float64(v, key)
		default:
			d.unknown(key)
		}
	})
}

func (d *lineDecoder) output(v *fastjson.Value, out *Output, exec string) {
	d.object(v, []byte("output"), func(key []byte, v *fastjson.Value) {
		switch string(key) {
		case "outcome":
			out.Outcome = Outcome(d.str(v, key))
		case "found":
			out.Found = d.int64Ptr(v, key)
		case "exists":
			out.Exists = d.bool(v, key)
		case "version":
			out.Version = d.int64(v, key)
		case "data":
			out.Data = d.plain(v, key)
		case "processed":
			out.Processed = d.bool(v, key)
		case "trace":
			out.Trace = d.traceItems(v, key, exec)
		case "outbox":
			out.Outbox = d.outboxItems(v, key)
		case "spawns":
			out.Spawns = d.spawnItems(v, key)
		case "timers":
			out.Timers = decodeArray(d, v, key, func(v *fastjson.Value, t *DueTimerItem) {
				d.object(v, key, func(key []byte, v *fastjson.Value) {
					switch string(key) {
					case "execution":
						t.Execution = d.str(v, key)
					case "path":
						t.Path = d.str(v, key)
					case "fire_at":
						t.FireAt = d.float64(v, key)
					default:
						d.unknown(key)
					}
				})
			})
		case "error":
			out.Error = d.plain(v, key)
		case "observed_ns":
			out.Observed = d.int64(v, key)
		default:
			d.unknown(key)
		}
	})
}

// traceItems decodes a read_trace listing of execution exec. A ring moves
// by a few appends between two reads, so a listing is mostly entries seen
// before, at the same indices: the decoder keeps each execution's entries
// seen so far, by index (its traceLog), compares a listing's entries with
// them in place instead of allocating them or looking them up in strs (a
// map of a million long ids is slow to search), and returns a listing
// that agrees with the log as a window of it: no copy, and far less for
// the collector to scan in a history of millions of listed entries. A
// listing that disagrees with the log (a store that changed an entry at
// an index, a gap) is kept as read, in a slice of its own.
func (d *lineDecoder) traceItems(v *fastjson.Value, key []byte, exec string) []TraceItem {
	log := d.traces[exec]
	if log == nil && exec != "" {
		if len(d.traces) >= maxInterned {
			clear(d.traces)
		}
		log = &traceLog{}
		d.traces[exec] = log
	}
	d.listing = decodeInto(d, d.listing[:0], v, key, func(v *fastjson.Value, t *TraceItem) {
		var entry []byte
		d.object(v, key, func(key []byte, v *fastjson.Value) {
			switch string(key) {
			case "index":
				t.Index = d.int64(v, key)
			case "entry":
				entry = d.bytes(v, key)
			default:
				d.unknown(key)
			}
		})
		t.Entry = log.entry(t.Index, entry)
	})
	items := d.listing
	switch {
	case d.err != nil || v.Type() == fastjson.TypeNull:
		return nil
	case len(items) == 0:
		return []TraceItem{} // [], not null
	case log == nil || !contiguous(items):
		return slices.Clone(items)
	}
	if !log.extend(items) {
		log.items = slices.Clone(items) // a new log from here on
	}
	from := items[0].Index - log.items[0].Index
	return log.items[from : from+int64(len(items)) : from+int64(len(items))]
}

// traceLog is one execution's trace entries as a decoder has read them:
// items by index, contiguous, and the bytes of their ids side by side in
// chunks, so that comparing a listing with it, and every later pass over
// the listings, reads memory in order instead of one scattered string per
// entry.
type traceLog struct {
	items []TraceItem
	chunk []byte // the last chunk of ids; earlier ones are held by their strings
}

// entry is the log's entry at index if it holds b, else a new string of b.
// A nil log (a listing of no execution) keeps nothing.
func (l *traceLog) entry(index int64, b []byte) string {
	if l == nil {
		return string(b)
	}
	if len(l.items) > 0 {
		if pos := index - l.items[0].Index; pos >= 0 && pos < int64(len(l.items)) && l.items[pos].Index == index && l.items[pos].Entry == string(b) {
			return l.items[pos].Entry
		}
	}
	if len(b) == 0 {
		return ""
	}
	if len(l.chunk)+len(b) > cap(l.chunk) {
		// Chunks double from 64 bytes to 64 KiB: an execution with a few
		// entries holds little, one with thousands a few allocations.
		l.chunk = make([]byte, 0, max(len(b), min(2*cap(l.chunk), 64<<10), 64))
	}
	at := len(l.chunk)
	l.chunk = append(l.chunk, b...)
	// The bytes at [at, at+len(b)) are never written again: the chunk only
	// grows past them, within its capacity.
	return unsafe.String(&l.chunk[at], len(b))
}

// contiguous reports whether items' indices follow one another.
func contiguous(items []TraceItem) bool {
	for j := 1; j < len(items); j++ {
		if items[j].Index != items[0].Index+int64(j) {
			return false
		}
	}
	return true
}

// extend appends to the log items' entries past its end, when items
// (contiguous) start within the log or right after it and agree with it
// where they overlap; false otherwise, the log unchanged. Windows of the
// log taken before stay valid: they are capped at their length, and
// append writes only past it.
func (l *traceLog) extend(items []TraceItem) bool {
	if len(l.items) == 0 {
		return false
	}
	from := items[0].Index - l.items[0].Index
	if from < 0 || from > int64(len(l.items)) {
		return false
	}
	overlap := min(int64(len(items)), int64(len(l.items))-from)
	for j := range overlap {
		if l.items[from+j].Entry != items[j].Entry {
			return false
		}
	}
	l.items = append(l.items, items[overlap:]...)
	return true
}

// outboxItems decodes a pending_outbox listing. Like a trace listing, it
// is mostly the previous listing's entries (by seq, both ascending): their
// strings are taken from it.
func (d *lineDecoder) outboxItems(v *fastjson.Value, key []byte) []OutboxItem {
	prev, j := d.outbox, 0
	items := decodeArray(d, v, key, func(v *fastjson.Value, o *OutboxItem) {
		var event, target []byte
		d.object(v, key, func(key []byte, v *fastjson.Value) {
			switch string(key) {
			case "seq":
				o.Seq = d.int64(v, key)
			case "event_id":
				event = d.bytes(v, key)
			case "target":
				if v.Type() != fastjson.TypeNull {
					target = d.bytes(v, key)
					if target == nil {
						target = []byte{}
					}
				}
			default:
				d.unknown(key)
			}
		})
		if p, ok := atSeq(prev, &j, o.Seq, func(p OutboxItem) int64 { return p.Seq }); ok && p.EventID == string(event) &&
			(p.Target == nil) == (target == nil) && (target == nil || *p.Target == string(target)) {
			o.EventID, o.Target = p.EventID, p.Target
			return
		}
		o.EventID = d.intern(event)
		if target != nil {
			t := d.intern(target)
			o.Target = &t
		}
	})
	if d.err == nil {
		d.outbox = items
	}
	return items
}

// spawnItems decodes a pending_spawns listing as outboxItems does.
func (d *lineDecoder) spawnItems(v *fastjson.Value, key []byte) []SpawnItem {
	prev, j := d.spawns, 0
	items := decodeArray(d, v, key, func(v *fastjson.Value, s *SpawnItem) {
		var parent, child []byte
		d.object(v, key, func(key []byte, v *fastjson.Value) {
			switch string(key) {
			case "seq":
				s.Seq = d.int64(v, key)
			case "parent":
				parent = d.bytes(v, key)
			case "child":
				child = d.bytes(v, key)
			default:
				d.unknown(key)
			}
		})
		if p, ok := atSeq(prev, &j, s.Seq, func(p SpawnItem) int64 { return p.Seq }); ok && p.Parent == string(parent) && p.Child == string(child) {
			s.Parent, s.Child = p.Parent, p.Child
			return
		}
		s.Parent, s.Child = d.intern(parent), d.intern(child)
	})
	if d.err == nil {
		d.spawns = items
	}
	return items
}

// atSeq moves *j through prev (ascending by seq) to seq, and returns the
// item there if prev holds one at that seq: a walk of two listings in
// step, one pass for the whole listing.
func atSeq[T any](prev []T, j *int, seq int64, seqOf func(T) int64) (T, bool) {
	for *j < len(prev) && seqOf(prev[*j]) < seq {
		*j++
	}
	if *j < len(prev) && seqOf(prev[*j]) == seq {
		return prev[*j], true
	}
	var zero T
	return zero, false
}

// object calls field for each member of the object v; null is an empty
// object, as encoding/json takes it.
func (d *lineDecoder) object(v *fastjson.Value, what []byte, field func(key []byte, v *fastjson.Value)) {
	if d.err != nil || v.Type() == fastjson.TypeNull {
		return
	}
	o, err := v.Object()
	if err != nil {
		d.fail(fmt.Errorf("json: %s is not an object", what))
		return
	}
	o.Visit(func(k []byte, v *fastjson.Value) {
		if d.err == nil {
			field(k, v)
		}
	})
}

// decodeArray decodes the array v into a new slice (encoding/json too
// replaces a slice a repeated key had set); null is a nil slice.
func decodeArray[T any](d *lineDecoder, v *fastjson.Value, k []byte, elem func(*fastjson.Value, *T)) []T {
	if d.err != nil || v.Type() == fastjson.TypeNull {
		return nil
	}
	return decodeInto(d, []T{}, v, k, elem) // [] is an empty slice, not nil
}

// decodeInto is decodeArray into buf (emptied first, grown as needed), for
// a caller that keeps the result only in part.
func decodeInto[T any](d *lineDecoder, buf []T, v *fastjson.Value, k []byte, elem func(*fastjson.Value, *T)) []T {
	buf = buf[:0]
	if d.err != nil || v.Type() == fastjson.TypeNull {
		return buf
	}
	a, err := v.Array()
	if err != nil {
		d.fail(fmt.Errorf("json: field %q is not an array", k))
		return buf
	}
	buf = slices.Grow(buf, len(a))[:len(a)]
	for i, e := range a {
		buf[i] = *new(T)
		elem(e, &buf[i])
	}
	return buf
}

// str decodes a string of which a history holds few distinct values, each
// on many lines (kinds, outcomes, execution ids, timer paths): one copy of
// each is kept.
func (d *lineDecoder) str(v *fastjson.Value, k []byte) string {
	return d.intern(d.bytes(v, k))
}

// plain decodes a string that is new or recurs only a few times (an
// error, a commit's witness token and the loads that return it, event
// ids): a copy costs less than finding it among a million others (a
// history of a million operations read 0.77 of the time with these not
// kept once).
func (d *lineDecoder) plain(v *fastjson.Value, k []byte) string {
	return string(d.bytes(v, k))
}

// bytes decodes a string (null is "") into bytes valid until the next
// line.
func (d *lineDecoder) bytes(v *fastjson.Value, k []byte) []byte {
	if d.err != nil || v.Type() == fastjson.TypeNull {
		return nil
	}
	b, err := v.StringBytes()
	if err != nil {
		d.fail(fmt.Errorf("json: field %q is not a string", k))
		return nil
	}
	return b
}

func (d *lineDecoder) strPtr(v *fastjson.Value, k []byte) *string {
	if d.err != nil || v.Type() == fastjson.TypeNull {
		return nil
	}
	s := d.str(v, k)
	return &s
}

func (d *lineDecoder) int64(v *fastjson.Value, k []byte) int64 {
	if d.err != nil || v.Type() == fastjson.TypeNull {
		return 0
	}
	if v.Type() != fastjson.TypeNumber {
		d.fail(fmt.Errorf("json: field %q is not a number", k))
		return 0
	}
	d.num = v.MarshalTo(d.num[:0])
	if !integer(d.num) {
		d.fail(fmt.Errorf("json: field %q is not an integer: %s", k, d.num))
		return 0
	}
	n, err := v.Int64()
	if err != nil {
		d.fail(fmt.Errorf("json: field %q is not an integer: %v", k, err))
	}
	return n
}

func (d *lineDecoder) int64Ptr(v *fastjson.Value, k []byte) *int64 {
	if d.err != nil || v.Type() == fastjson.TypeNull {
		return nil
	}
	n := d.int64(v, k)
	return &n
}

func (d *lineDecoder) float64(v *fastjson.Value, k []byte) float64 {
	if d.err != nil || v.Type() == fastjson.TypeNull {
		return 0
	}
	if v.Type() != fastjson.TypeNumber {
		d.fail(fmt.Errorf("json: field %q is not a number", k))
		return 0
	}
	// fastjson's own float parsing is not correctly rounded at extreme
	// exponents; strconv's is, as encoding/json's.
	d.num = v.MarshalTo(d.num[:0])
	if !number(d.num) {
		d.fail(fmt.Errorf("json: field %q is not a JSON number: %s", k, d.num))
		return 0
	}
	f, err := strconv.ParseFloat(string(d.num), 64)
	if err != nil {
		d.fail(fmt.Errorf("json: field %q is not a number: %v", k, err))
	}
	return f
}

func (d *lineDecoder) bool(v *fastjson.Value, k []byte) bool {
	if d.err != nil || v.Type() == fastjson.TypeNull {
		return false
	}
	b, err := v.Bool()
	if err != nil {
		d.fail(fmt.Errorf("json: field %q is not a boolean", k))
	}
	return b
}

// intern returns the one copy of b's string.
func (d *lineDecoder) intern(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if s, ok := d.strs[string(b)]; ok {
		return s
	}
	if len(d.strs) >= maxInterned {
		clear(d.strs)
	}
	s := string(b)
	d.strs[s] = s
	return s
}

func (d *lineDecoder) unknown(k []byte) {
	d.fail(fmt.Errorf("json: unknown field %q", k))
}

func (d *lineDecoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

// plainText reports whether a line is valid UTF-8 whose strings need no
// more than fastjson checks: no control character anywhere (a line
// storecheck writes has none: encoding/json escapes them) and no escape
// but \" \\ \/ \b \f \n \r \t (a \uXXXX goes to encoding/json, which
// alone decodes surrogates as it does).
func plainText(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c < 0x20:
			return false
		case c == '\\':
			if i+1 == len(raw) || !strings.ContainsRune(`"\/bfnrt`, rune(raw[i+1])) {
				return false
			}
			i++
		}
	}
	return utf8.Valid(raw)
}

// integer reports whether b is a JSON integer: -?(0|[1-9][0-9]*).
func integer(b []byte) bool {
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	if len(b) == 0 || (b[0] == '0' && len(b) > 1) {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// number reports whether b is a JSON number:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func number(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	start := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	if i == start || (b[start] == '0' && i-start > 1) {
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		frac := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == frac {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		exp := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == exp {
			return false
		}
	}
	return i == len(b)
}
