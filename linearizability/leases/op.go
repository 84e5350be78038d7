package leases

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// Kind is the operation.
type Kind string

// The recorded operations.
const (
	Claim   Kind = "claim_next"
	Renew   Kind = "renew_lease"
	Commit  Kind = "commit_checkpoint"
	Finish  Kind = "finish_claim"
	Requeue Kind = "requeue_expired_leases"
)

// Outcome is how an operation ended.
type Outcome string

// The outcomes: the contract's error kinds, plus none (a claim that found
// no queued run), failed (an error that provably changed nothing) and
// indeterminate (an error after which the write may or may not have
// happened).
const (
	OK            Outcome = "ok"
	None          Outcome = "none"
	Stale         Outcome = "stale_lease"
	Conflict      Outcome = "conflict"
	Invalid       Outcome = "invalid"
	NotFound      Outcome = "not_found"
	Failed        Outcome = "failed"
	Indeterminate Outcome = "indeterminate"
)

// EndOfHistory is the return time of an operation whose outcome is unknown:
// porcupine may then place it anywhere after its call.
const EndOfHistory = math.MaxInt64

// Op is one recorded operation, its inputs and what it returned. Times are
// nanoseconds: Call and Return on the recorder's clock, Now, Expires and
// Lease on the store's (the time input the operation carried).
type Op struct {
	Client int    `json:"client"`
	Worker string `json:"worker,omitempty"`
	Kind   Kind   `json:"kind"`
	// Run is the run operated on; for a claim, the run it returned.
	Run string `json:"run,omitempty"`
	// Token is the fence's token; for a claim, the token it granted.
	Token    int64   `json:"token,omitempty"`
	Lease    int64   `json:"lease,omitempty"`
	Now      int64   `json:"now"`
	Expected int64   `json:"expected,omitempty"` // expected run version
	Seq      int64   `json:"seq,omitempty"`      // checkpoint sequence
	Target   string  `json:"target,omitempty"`   // finish target status
	Outcome  Outcome `json:"outcome"`
	// Version is the run version an ok claim, commit or finish returned.
	Version int64 `json:"version,omitempty"`
	// Expires is the lease expiry an ok claim or renew returned.
	Expires int64 `json:"expires,omitempty"`
	// Requeued are the runs an ok requeue returned.
	Requeued []string `json:"requeued,omitempty"`
	// PastLease marks an operation whose time input is at or after the
	// expiry its worker was last granted (it stalled, or its clock jumped):
	// the worker no longer holds the lease, so the operation must fail.
	PastLease bool   `json:"past_lease,omitempty"`
	Err       string `json:"err,omitempty"`
	Call      int64  `json:"call"`
	Return    int64  `json:"return"`
}

func (o Op) String() string {
	s := fmt.Sprintf("%s c%d", o.Kind, o.Client)
	if o.Worker != "" {
		s += " " + o.Worker
	}
	if o.Run != "" {
		s += fmt.Sprintf(" run=%s", o.Run)
	}
	if o.Token != 0 {
		s += fmt.Sprintf(" token=%d", o.Token)
	}
	if o.Kind == Commit || o.Kind == Finish {
		s += fmt.Sprintf(" v%d", o.Expected)
	}
	if o.Kind == Commit {
		s += fmt.Sprintf(" seq=%d", o.Seq)
	}
	if o.Target != "" {
		s += " → " + o.Target
	}
	if o.PastLease {
		s += " (past its lease)"
	}
	s += fmt.Sprintf(" now=%d → %s", o.Now, o.Outcome)
	if len(o.Requeued) > 0 {
		s += fmt.Sprintf(" %v", o.Requeued)
	}
	return s
}

// Fenced reports whether the operation needs the lease.
func (o Op) Fenced() bool { return o.Kind == Renew || o.Kind == Commit || o.Kind == Finish }

// header is the first line WriteJSONL writes, {"lease_history": {"ops": N}}:
// how many operation lines follow. A file holding another number was cut
// (at a line ending, where nothing else shows it) or edited. A history
// without it (written before it was recorded, or by hand) is read as it is.
type header struct {
	LeaseHistory *headerFields `json:"lease_history"`
}

type headerFields struct {
	Ops int `json:"ops"`
}

// headerPrefix starts the header line; no operation line starts so.
var headerPrefix = []byte(`{"lease_history"`)

// WriteJSONL writes ops as JSON lines: the header, then one operation per
// line.
func WriteJSONL(w io.Writer, ops []Op) error {
	enc := json.NewEncoder(w)
	if err := enc.Encode(header{LeaseHistory: &headerFields{Ops: len(ops)}}); err != nil {
		return fmt.Errorf("write history header: %w", err)
	}
	for _, op := range ops {
		if err := enc.Encode(op); err != nil {
			return fmt.Errorf("write history: %w", err)
		}
	}
	return nil
}

// ErrNotLeaseHistory marks a file whose first operation is not one of a
// lease history: a history of another kind, or no history at all.
var ErrNotLeaseHistory = errors.New("not a lease history")

// ErrCut marks a lease history holding another number of operations than
// its header says were written.
var ErrCut = errors.New("the lease history was cut or edited")

// ReadJSONL reads JSON lines written by WriteJSONL. A line that is not an
// operation of a lease history (a field Op does not have, a kind or
// outcome it does not know) is an error naming the line, so that a history
// of another kind is never read as a lease history; on the first operation
// line of a file without a header, the error is ErrNotLeaseHistory. A file
// whose header states another number of operations than it holds is an
// ErrCut error. Blank lines are skipped.
func ReadJSONL(r io.Reader) ([]Op, error) {
	var ops []Op
	var head *headerFields
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for line := 1; sc.Scan(); line++ {
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		if head == nil && len(ops) == 0 && bytes.HasPrefix(raw, headerPrefix) {
			var err error
			if head, err = decodeHeader(raw); err != nil {
				return nil, fmt.Errorf("read history line %d: header: %w", line, err)
			}
			continue
		}
		op, err := decodeOp(raw)
		if err != nil && len(ops) == 0 && head == nil {
			return nil, fmt.Errorf("read history line %d: %w: %w", line, ErrNotLeaseHistory, err)
		}
		if err != nil {
			return nil, fmt.Errorf("read history line %d: %w", line, err)
		}
		ops = append(ops, op)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	if head != nil && len(ops) != head.Ops {
		return nil, fmt.Errorf("%w: %d operations, but its header says %d were written", ErrCut, len(ops), head.Ops)
	}
	return ops, nil
}

// decodeHeader decodes the header line, refusing fields it does not have.
func decodeHeader(line []byte) (*headerFields, error) {
	var h header
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	if h.LeaseHistory == nil || h.LeaseHistory.Ops < 0 {
		return nil, fmt.Errorf("no operation count")
	}
	return h.LeaseHistory, nil
}

// LoadFile reads the lease history at path (ReadJSONL).
func LoadFile(path string) ([]Op, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ops, err := ReadJSONL(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ops, nil
}

// decodeOp decodes one line, refusing fields and values Op does not have.
func decodeOp(line []byte) (Op, error) {
	var op Op
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&op); err != nil {
		return Op{}, err
	}
	if dec.More() {
		return Op{}, fmt.Errorf("more than one JSON value")
	}
	switch op.Kind {
	case Claim, Renew, Commit, Finish, Requeue:
	default:
		return Op{}, fmt.Errorf("unknown kind %q", op.Kind)
	}
	switch op.Outcome {
	case OK, None, Stale, Conflict, Invalid, NotFound, Failed, Indeterminate:
	default:
		return Op{}, fmt.Errorf("unknown outcome %q", op.Outcome)
	}
	return op, nil
}
