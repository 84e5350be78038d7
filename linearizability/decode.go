package linearizability

import (
	"slices"
	"unsafe"
)

// Reading a large history is mostly decoding its lines. encoding/json
// reflects over Operation for every line and allocates every string
// anew, though a history repeats the same few thousand execution ids,
// event ids and trace entries over and over (a read_trace lists up to 200
// entries, each already seen). lineDecoder decodes the lines storecheck
// writes without reflection and without a parse tree (scan.go reads each
// value in place, once), and keeps one copy of each repeated string; a
// line it cannot take that way exactly as encoding/json would (an escape
// written \uXXXX, invalid UTF-8) goes through encoding/json, and so does
// every line it finds wrong: what is refused, and the words it is refused
// in, are encoding/json's (FuzzLineDecoder).

// lineDecoder decodes operation lines; each decoding goroutine has its own
// (its scanner and its strings are not shared).
type lineDecoder struct {
	s scanner
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
	s := &d.s
	s.reset(raw)
	s.object(func(key []byte) {
		switch string(key) {
		case "client":
			if n, ok := s.int64(); ok {
				op.Client = int(n)
			}
		case "kind":
			d.str((*string)(&op.Kind))
		case "execution":
			d.str(&op.Execution)
		case "input":
			d.input(&op.Input)
		case "output":
			d.output(&op.Output, op.Execution)
		case "call_ns":
			d.int64(&op.Call)
		case "return_ns":
			d.int64(&op.Return)
		case "heal":
			d.bool(&op.Heal)
		case "replica":
			d.str(&op.Replica)
		case "ryw":
			d.bool(&op.ReadYourWrites)
		default:
			s.bad = true // an unknown field, which encoding/json names
		}
	})
	s.end()
	if s.bad {
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

func (d *lineDecoder) input(in *Input) {
	s := &d.s
	s.object(func(key []byte) {
		switch string(key) {
		case "expected":
			d.int64(&in.Expected)
		case "data":
			d.plain(&in.Data)
		case "prev":
			d.plain(&in.Prev)
		case "event_id":
			d.plain(&in.EventID)
		case "emits":
			in.Emits = decodeArray(d, func(e *EmitRef) {
				s.object(func(key []byte) {
					switch string(key) {
					case "event_id":
						d.plain(&e.EventID)
					case "target":
						e.Target = d.strPtr()
					default:
						s.bad = true
					}
				})
			})
		case "timers":
			in.Timers = decodeArray(d, func(t *TimerRef) {
				s.object(func(key []byte) {
					switch string(key) {
					case "action":
						d.str(&t.Action)
					case "path":
						d.str(&t.Path)
					case "fire_at":
						d.float64(&t.FireAt)
					default:
						s.bad = true
					}
				})
			})
		case "spawns":
			in.Spawns = decodeArray(d, d.str)
		case "trace":
			d.plain(&in.Trace)
		case "seq":
			d.int64(&in.Seq)
		case "path":
			d.str(&in.Path)
		case "fire_at":
			d.float64(&in.FireAt)
		case "now":
			d.float64(&in.Now)
		default:
			s.bad = true
		}
	})
}

func (d *lineDecoder) output(out *Output, exec string) {
	s := &d.s
	s.object(func(key []byte) {
		switch string(key) {
		case "outcome":
			d.str((*string)(&out.Outcome))
		case "found":
			out.Found = d.int64Ptr()
		case "exists":
			d.bool(&out.Exists)
		case "version":
			d.int64(&out.Version)
		case "data":
			d.plain(&out.Data)
		case "processed":
			d.bool(&out.Processed)
		case "trace":
			out.Trace = d.traceItems(exec)
		case "outbox":
			out.Outbox = d.outboxItems()
		case "spawns":
			out.Spawns = d.spawnItems()
		case "timers":
			out.Timers = decodeArray(d, func(t *DueTimerItem) {
				s.object(func(key []byte) {
					switch string(key) {
					case "execution":
						d.str(&t.Execution)
					case "path":
						d.str(&t.Path)
					case "fire_at":
						d.float64(&t.FireAt)
					default:
						s.bad = true
					}
				})
			})
		case "error":
			d.plain(&out.Error)
		case "observed_ns":
			d.int64(&out.Observed)
		default:
			s.bad = true
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
func (d *lineDecoder) traceItems(exec string) []TraceItem {
	log := d.traces[exec]
	if log == nil && exec != "" {
		if len(d.traces) >= maxInterned {
			clear(d.traces)
		}
		log = &traceLog{}
		d.traces[exec] = log
	}
	var listed bool
	d.listing, listed = decodeInto(d, d.listing, func(t *TraceItem) {
		var entry []byte
		d.s.object(func(key []byte) {
			switch string(key) {
			case "index":
				d.int64(&t.Index)
			case "entry":
				if b, ok := d.s.str(); ok {
					entry = b
				}
			default:
				d.s.bad = true
			}
		})
		t.Entry = log.entry(t.Index, entry)
	})
	items := d.listing
	switch {
	case d.s.bad || !listed:
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
func (d *lineDecoder) outboxItems() []OutboxItem {
	prev, j := d.outbox, 0
	items := decodeArray(d, func(o *OutboxItem) {
		var event, target []byte
		d.s.object(func(key []byte) {
			switch string(key) {
			case "seq":
				d.int64(&o.Seq)
			case "event_id":
				if b, ok := d.s.str(); ok {
					event = b
				}
			case "target":
				if b, ok := d.s.str(); ok {
					target = b
					if target == nil {
						target = []byte{} // "" is a target, null none
					}
				} else {
					target = nil
				}
			default:
				d.s.bad = true
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
	if !d.s.bad {
		d.outbox = items
	}
	return items
}

// spawnItems decodes a pending_spawns listing as outboxItems does.
func (d *lineDecoder) spawnItems() []SpawnItem {
	prev, j := d.spawns, 0
	items := decodeArray(d, func(s *SpawnItem) {
		var parent, child []byte
		d.s.object(func(key []byte) {
			switch string(key) {
			case "seq":
				d.int64(&s.Seq)
			case "parent":
				if b, ok := d.s.str(); ok {
					parent = b
				}
			case "child":
				if b, ok := d.s.str(); ok {
					child = b
				}
			default:
				d.s.bad = true
			}
		})
		if p, ok := atSeq(prev, &j, s.Seq, func(p SpawnItem) int64 { return p.Seq }); ok && p.Parent == string(parent) && p.Child == string(child) {
			s.Parent, s.Child = p.Parent, p.Child
			return
		}
		s.Parent, s.Child = d.intern(parent), d.intern(child)
	})
	if !d.s.bad {
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

// decodeArray decodes an array into a new slice (encoding/json too
// replaces a slice a repeated key had set); null is a nil slice, [] an
// empty one.
func decodeArray[T any](d *lineDecoder, elem func(*T)) []T {
	items, listed := decodeInto(d, []T{}, elem)
	if !listed {
		return nil
	}
	return items
}

// decodeInto is decodeArray into buf (emptied first, grown as needed), for
// a caller that keeps the result only in part; false for null.
func decodeInto[T any](d *lineDecoder, buf []T, elem func(*T)) ([]T, bool) {
	buf = buf[:0]
	listed := d.s.array(func() {
		buf = append(buf, *new(T))
		elem(&buf[len(buf)-1])
	})
	return buf, listed
}

// str decodes a string of which a history holds few distinct values, each
// on many lines (kinds, outcomes, execution ids, timer paths): one copy of
// each is kept. null leaves *p as it was, as encoding/json leaves it.
func (d *lineDecoder) str(p *string) {
	if b, ok := d.s.str(); ok {
		*p = d.intern(b)
	}
}

// plain decodes a string that is new or recurs only a few times (an
// error, a commit's witness token and the loads that return it, event
// ids): a copy costs less than finding it among a million others (a
// history of a million operations read 0.77 of the time with these not
// kept once).
func (d *lineDecoder) plain(p *string) {
	if b, ok := d.s.str(); ok {
		*p = string(b)
	}
}

// strPtr decodes a string that may be null (nil).
func (d *lineDecoder) strPtr() *string {
	b, ok := d.s.str()
	if !ok {
		return nil
	}
	s := d.intern(b)
	return &s
}

func (d *lineDecoder) int64(p *int64) {
	if n, ok := d.s.int64(); ok {
		*p = n
	}
}

// int64Ptr decodes an integer that may be null (nil).
func (d *lineDecoder) int64Ptr() *int64 {
	n, ok := d.s.int64()
	if !ok {
		return nil
	}
	return &n
}

func (d *lineDecoder) float64(p *float64) {
	if f, ok := d.s.float64(); ok {
		*p = f
	}
}

func (d *lineDecoder) bool(p *bool) {
	if b, ok := d.s.bool(); ok {
		*p = b
	}
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
