package linearizability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"pgregory.net/rapid"

	"github.com/storecheck/storecheck/model"
)

// decodeBoth decodes line with the fast decoder and with encoding/json
// (strictUnmarshal), and fails t unless both agree: the same operation, or
// both an error with the same text.
func decodeBoth(t interface {
	Helper()
	Fatalf(string, ...any)
}, d *lineDecoder, line []byte) {
	t.Helper()
	var fast, slow Operation
	errFast, errSlow := d.decode(line, &fast), strictUnmarshal(line, &slow)
	if fmt.Sprint(errFast) != fmt.Sprint(errSlow) {
		t.Fatalf("line %s: fast decoder says %v, encoding/json %v", line, errFast, errSlow)
	}
	if errSlow == nil && !reflect.DeepEqual(fast, slow) {
		t.Fatalf("line %s:\nfast decoder %+v\nencoding/json %+v", line, fast, slow)
	}
}

// TestLineDecoderAgreesOnHistories: every line of simulated histories
// (every kind, listings, indeterminate writes) decodes as encoding/json
// decodes it.
func TestLineDecoderAgreesOnHistories(t *testing.T) {
	d, lines := newLineDecoder(), 0
	for seed := uint64(1); seed <= 3; seed++ {
		h := simulate(t, simConfig{ops: 2000, clients: 6, execs: 8, traceMax: model.DefaultTraceMax, seed: seed, indeterminate: 0.05})
		buf := jsonlOf(t, h)
		for _, line := range bytes.Split(buf.Bytes(), []byte("\n"))[1:] {
			if len(line) > 0 {
				decodeBoth(t, d, line)
				lines++
			}
		}
	}
	if d.slow != 0 || lines < 6000 {
		t.Errorf("%d of %d lines went to encoding/json; storecheck's own lines should all take the fast path", d.slow, lines)
	}
}

// TestLineDecoderAgreesOnDrawnOperations: operations with every field
// drawn (odd strings, nulls, empty and long listings) encode and decode
// back the same way through both decoders.
func TestLineDecoderAgreesOnDrawnOperations(t *testing.T) {
	d := newLineDecoder()
	rapid.Check(t, func(t *rapid.T) {
		str := rapid.OneOf(rapid.SampledFrom([]string{"", "e1", "c0-u3", "a\"b", "tab\there", "<&>", "\u2028", "é", "back\\slash"}), rapid.String())
		opt := func(label string) *string {
			if rapid.Bool().Draw(t, label+"_nil") {
				return nil
			}
			s := str.Draw(t, label)
			return &s
		}
		n := rapid.Int64Range(-1<<53, 1<<53)
		f := rapid.Float64Range(-1e6, 1e6)
		op := Operation{
			Client: rapid.IntRange(0, 1<<20).Draw(t, "client"), Kind: Kind(str.Draw(t, "kind")), Execution: str.Draw(t, "execution"),
			Call: n.Draw(t, "call"), Return: n.Draw(t, "return"), Heal: rapid.Bool().Draw(t, "heal"),
			Replica: str.Draw(t, "replica"), ReadYourWrites: rapid.Bool().Draw(t, "ryw"),
			Input: Input{
				Expected: n.Draw(t, "expected"), Data: str.Draw(t, "data"), Prev: str.Draw(t, "prev"), EventID: str.Draw(t, "event"),
				Emits: rapid.SliceOfN(rapid.Custom(func(t *rapid.T) EmitRef { return EmitRef{EventID: str.Draw(t, "e"), Target: opt("target")} }), 0, 3).Draw(t, "emits"),
				Timers: rapid.SliceOfN(rapid.Custom(func(t *rapid.T) TimerRef {
					return TimerRef{Action: str.Draw(t, "a"), Path: str.Draw(t, "p"), FireAt: f.Draw(t, "f")}
				}), 0, 3).Draw(t, "timers"),
				Spawns: rapid.SliceOfN(str, 0, 3).Draw(t, "spawns"), Trace: str.Draw(t, "trace"), Seq: n.Draw(t, "seq"),
				Path: str.Draw(t, "path"), FireAt: f.Draw(t, "fire_at"), Now: f.Draw(t, "now"),
			},
			Output: Output{
				Outcome: Outcome(str.Draw(t, "outcome")), Exists: rapid.Bool().Draw(t, "exists"), Version: n.Draw(t, "version"),
				Data: str.Draw(t, "odata"), Processed: rapid.Bool().Draw(t, "processed"), Error: str.Draw(t, "error"), Observed: n.Draw(t, "observed"),
				Trace: rapid.SliceOfN(rapid.Custom(func(t *rapid.T) TraceItem { return TraceItem{Index: n.Draw(t, "i"), Entry: str.Draw(t, "e")} }), 0, 4).Draw(t, "otrace"),
				Outbox: rapid.SliceOfN(rapid.Custom(func(t *rapid.T) OutboxItem {
					return OutboxItem{Seq: n.Draw(t, "s"), EventID: str.Draw(t, "e"), Target: opt("t")}
				}), 0, 3).Draw(t, "outbox"),
				Spawns: rapid.SliceOfN(rapid.Custom(func(t *rapid.T) SpawnItem {
					return SpawnItem{Seq: n.Draw(t, "s"), Parent: str.Draw(t, "p"), Child: str.Draw(t, "c")}
				}), 0, 3).Draw(t, "ospawns"),
				Timers: rapid.SliceOfN(rapid.Custom(func(t *rapid.T) DueTimerItem {
					return DueTimerItem{Execution: str.Draw(t, "x"), Path: str.Draw(t, "p"), FireAt: f.Draw(t, "f")}
				}), 0, 3).Draw(t, "otimers"),
			},
		}
		if rapid.Bool().Draw(t, "found") {
			v := n.Draw(t, "found_v")
			op.Output.Found = &v
		}
		line, err := json.Marshal(op)
		if err != nil {
			t.Fatal(err)
		}
		decodeBoth(t, d, line)
	})
}

// TestLineDecoderRefusesAsEncodingJSON: lines that are wrong, or right in
// ways the fast path does not take, get encoding/json's answer.
func TestLineDecoderRefusesAsEncodingJSON(t *testing.T) {
	d := newLineDecoder()
	for _, line := range []string{
		`{"kind":"load","nonsense":1}`,
		`{"kind":"load","input":{"nonsense":1}}`,
		`{"kind":"read_trace","output":{"outcome":"ok","trace":[{"index":1,"entry":"x","extra":2}]}}`,
		`{not json`,
		`{"client":01}`,
		`{"client":1.5}`,
		`{"client":"1"}`,
		`{"client":NaN}`,
		`{"client":1e3}`,
		`{"client":99999999999999999999}`,
		`{"heal":1}`,
		`{"input":[]}`,
		`{"output":{"trace":{}}}`,
		`{"kind":"load"} {"kind":"load"}`,
		`[1,2]`,
		`null`,
		`{"Client":3,"KIND":"load"}`,
		`{"kind":"lo\u0061d","execution":"e\ud800"}`,
		"{\"kind\":\"load\",\"execution\":\"e\xff\"}",
		`{"kind":"load","execution":null,"input":null,"output":{"found":null,"trace":null}}`,
		`{"kind":"load","client":2,"client":3,"input":{"data":"a"},"input":{"prev":"b"}}`,
		"{\"kind\":\"lo\tad\"}",
		`{"kind":"lo\xad"}`,
		`{"client":+1}`,
		`{"client":-01}`,
		`{"input":{"fire_at":1.}}`,
		`{"input":{"fire_at":.5}}`,
		`{"input":{"now":1e}}`,
		`{"input":{"now":Infinity}}`,
		`{"input":{"now":-nan}}`,
		`{"kind":"load",}`,
		`{"kind":"load" "client":1}`,
		`{"kind":"load"`,
		`{"output":{"outbox":[{"seq":1,},]}}`,
	} {
		decodeBoth(t, d, []byte(line))
	}
	// All but the three well-formed ones (null, nulls, repeated keys).
	if d.slow != 31 {
		t.Errorf("%d lines went to encoding/json, want 31", d.slow)
	}
	// Numbers and escapes JSON allows take the fast path, and agree.
	d.slow = 0
	for _, line := range []string{
		`{"client":-0,"input":{"fire_at":-0.0,"now":1E+2,"expected":0},"output":{"found":-7}}`,
		`{"input":{"fire_at":12.5e-3,"now":0.000001}}`,
		`{"kind":"a\"b\\c\/d\be\ff\ng\rh\ti"}`,
		// null leaves a field as a repeated key had set it; a pointer or a
		// slice it sets to nil.
		`{"client":2,"client":null,"kind":"load","kind":null,"input":{"data":"a","data":null,"emits":[],"emits":null},"output":{"found":1,"found":null,"exists":true,"exists":null,"version":3,"version":null}}`,
		// whitespace between every token, escapes beside non-ASCII text
		" { \"kind\" : \"read_trace\" ,\t\"output\":{\"trace\":[ {\"index\":1 , \"entry\":\"é\\n\"} ] } } ",
		`{"kind":"pending_outbox","output":{"outbox":[{"seq":1,"event_id":"é\tx","target":"\"t\""},{"seq":2,"event_id":"","target":""},{"seq":3,"event_id":"y","target":null}]}}`,
	} {
		decodeBoth(t, d, []byte(line))
	}
	if d.slow != 0 {
		t.Errorf("%d well-formed lines went to encoding/json", d.slow)
	}
}

// FuzzLineDecoder: whatever the line, the fast decoder's answer is
// encoding/json's — the same operation, or an error in the same words.
// The seeds are lines of a simulated history and the lines above; `go test
// -fuzz FuzzLineDecoder ./linearizability/` searches further.
func FuzzLineDecoder(f *testing.F) {
	h := simulate(f, simConfig{ops: 300, clients: 4, execs: 3, traceMax: 8, seed: 1, indeterminate: 0.05})
	buf := jsonlOf(f, h)
	for _, line := range bytes.Split(buf.Bytes(), []byte("\n"))[1:] {
		f.Add(line)
	}
	for _, line := range []string{`{"client":01}`, `{"input":{"now":1e}}`, `{"kind":"lo\u0061d"}`, "{\"kind\":\"e\xff\"}", `{"a":1,}`, ` null `, `{"output":{"trace":[{"index":-0,"entry":"\/"}]}}`} {
		f.Add([]byte(line))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		decodeBoth(t, newLineDecoder(), line)
	})
}

// TestLineDecoderInterns: a string repeated across lines is held once.
func TestLineDecoderInterns(t *testing.T) {
	d := newLineDecoder()
	var a, b Operation
	for _, x := range []struct {
		op   *Operation
		line string
	}{{&a, `{"kind":"read_trace","execution":"e7","output":{"outcome":"ok","trace":[{"index":1,"entry":"t-abc"}]}}`}, {&b, `{"kind":"read_trace","execution":"e7","output":{"outcome":"ok","trace":[{"index":1,"entry":"t-abc"}]}}`}} {
		if err := d.decode([]byte(x.line), x.op); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Clone(a.Execution) != "e7" || a.Output.Trace[0].Entry != "t-abc" {
		t.Fatalf("decoded %+v", a)
	}
	if &unsafeBytes(a.Output.Trace[0].Entry)[0] != &unsafeBytes(b.Output.Trace[0].Entry)[0] {
		t.Errorf("the repeated trace entry is held twice")
	}
}

func unsafeBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// BenchmarkDecodeLines compares the line decoder with encoding/json on
// the lines of a simulated history (one goroutine each).
func BenchmarkDecodeLines(b *testing.B) {
	h := simulate(b, simConfig{ops: 20000, clients: 20, execs: 100, traceMax: model.DefaultTraceMax, seed: 1, indeterminate: 0.01})
	buf := jsonlOf(b, h)
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))[1:]
	b.Run("fast", func(b *testing.B) {
		d := newLineDecoder()
		b.SetBytes(int64(buf.Len()))
		for b.Loop() {
			for _, l := range lines {
				var op Operation
				if err := d.decode(l, &op); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(buf.Len()))
		for b.Loop() {
			for _, l := range lines {
				var op Operation
				if err := strictUnmarshal(l, &op); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// TestLineDecoderSharesQueueListings: an outbox entry listed again at the
// same seq is held once; one whose event changed at that seq is not taken
// from the earlier listing.
func TestLineDecoderSharesQueueListings(t *testing.T) {
	d := newLineDecoder()
	lines := []string{
		`{"kind":"pending_outbox","output":{"outcome":"ok","outbox":[{"seq":1,"event_id":"ev-a","target":"x"},{"seq":2,"event_id":"ev-b"}]}}`,
		`{"kind":"pending_outbox","output":{"outcome":"ok","outbox":[{"seq":2,"event_id":"ev-b"},{"seq":3,"event_id":"ev-c"}]}}`,
		`{"kind":"pending_outbox","output":{"outcome":"ok","outbox":[{"seq":2,"event_id":"ev-z"}]}}`,
	}
	ops := make([]Operation, len(lines))
	for i, l := range lines {
		if err := d.decode([]byte(l), &ops[i]); err != nil {
			t.Fatal(err)
		}
	}
	first, second, third := ops[0].Output.Outbox[1], ops[1].Output.Outbox[0], ops[2].Output.Outbox[0]
	if &unsafeBytes(first.EventID)[0] != &unsafeBytes(second.EventID)[0] {
		t.Errorf("seq 2 listed twice is held twice")
	}
	if third.EventID != "ev-z" || ops[1].Output.Outbox[1].EventID != "ev-c" || *ops[0].Output.Outbox[0].Target != "x" {
		t.Errorf("decoded %+v %+v %+v", ops[0].Output.Outbox, ops[1].Output.Outbox, ops[2].Output.Outbox)
	}
}

// TestLineDecoderSharesTraceListings: listings of one execution's ring that
// agree with what was read before are windows of one slice, and read as
// encoding/json reads them; a listing that disagrees (an entry changed at
// an index, a gap) is kept as read, and later windows never change an
// earlier listing.
func TestLineDecoderSharesTraceListings(t *testing.T) {
	listing := func(items ...string) string {
		return `{"kind":"read_trace","execution":"e1","output":{"outcome":"ok","trace":[` + strings.Join(items, ",") + `]}}`
	}
	lines := []string{
		listing(`{"index":0,"entry":"a"}`, `{"index":1,"entry":"b"}`),
		listing(`{"index":1,"entry":"b"}`, `{"index":2,"entry":"c"}`, `{"index":3,"entry":"d"}`), // the ring moved on
		listing(`{"index":0,"entry":"a"}`, `{"index":1,"entry":"b"}`),                            // the same as the first
		listing(`{"index":2,"entry":"X"}`, `{"index":3,"entry":"d"}`),                            // an entry changed at index 2
		listing(`{"index":5,"entry":"f"}`),                                                       // a gap
		listing(`{"index":2,"entry":"c"}`, `{"index":4,"entry":"e"}`),                            // not contiguous
		listing(),
		`{"kind":"read_trace","execution":"e1","output":{"outcome":"ok","trace":null}}`,
	}
	for _, l := range lines {
		decodeBoth(t, newLineDecoder(), []byte(l)) // each line alone reads as encoding/json reads it
	}
	ops := decodeInOrder(t, lines)
	tr := func(i int) []TraceItem { return ops[i].Output.Trace }
	if &tr(2)[1] != &tr(1)[0] {
		t.Errorf("listings that agree with the ring read before are not windows of one slice")
	}
	if cap(tr(0)) != len(tr(0)) {
		t.Errorf("a window has room past its end (cap %d, len %d): an append to it would write into a later listing", cap(tr(0)), len(tr(0)))
	}
}

// TestLineDecoderTraceLogChunks: a ring that moves through thousands of
// entries (ids kept side by side in chunks the log outgrows) reads, every
// listing, as encoding/json reads it, after all of them are read.
func TestLineDecoderTraceLogChunks(t *testing.T) {
	var lines []string
	for end := 1; end <= 3000; end += 7 {
		var items []string
		for i := max(0, end-200); i < end; i++ {
			items = append(items, fmt.Sprintf(`{"index":%d,"entry":"s%d-%d#%s"}`, i, i%20, i, strings.Repeat("ab", i%40)))
		}
		lines = append(lines, `{"kind":"read_trace","execution":"e9","output":{"outcome":"ok","trace":[`+strings.Join(items, ",")+`]}}`)
	}
	decodeInOrder(t, lines)
}

// decodeInOrder decodes lines with one decoder, one after the other, and
// then fails t unless every operation is still what encoding/json reads
// from its line: what a later line shares with an earlier one must change
// neither.
func decodeInOrder(t *testing.T, lines []string) []Operation {
	t.Helper()
	d := newLineDecoder()
	ops := make([]Operation, len(lines))
	for i, l := range lines {
		if err := d.decode([]byte(l), &ops[i]); err != nil {
			t.Fatal(err)
		}
	}
	for i, l := range lines {
		var want Operation
		if err := strictUnmarshal([]byte(l), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ops[i], want) {
			t.Fatalf("line %d of %d, decoded before the later ones: %+v, encoding/json %+v", i, len(lines), ops[i].Output, want.Output)
		}
	}
	return ops
}
