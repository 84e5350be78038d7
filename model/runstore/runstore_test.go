package runstore

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestTransitionTable pins the table the package comment documents.
func TestTransitionTable(t *testing.T) {
	want := map[Status]string{
		Queued:      "running waiting failed cancelled timed_out",
		Running:     "queued waiting needs_review completed failed cancelled timed_out",
		Waiting:     "queued failed cancelled timed_out",
		NeedsReview: "queued waiting completed failed cancelled",
		Completed:   "", Failed: "", Cancelled: "", TimedOut: "",
	}
	for _, from := range Statuses() {
		var got []string
		for _, to := range Statuses() {
			err := AssertTransition(from, to)
			if CanTransition(from, to) != (err == nil) {
				t.Errorf("%s → %s: CanTransition and AssertTransition disagree (%v)", from, to, err)
			}
			if err == nil {
				got = append(got, string(to))
			} else if !errors.Is(err, ErrInvalidTransition) {
				t.Errorf("%s → %s: %v is not ErrInvalidTransition", from, to, err)
			}
		}
		if strings.Join(got, " ") != want[from] {
			t.Errorf("%s → {%s}, want {%s}", from, strings.Join(got, " "), want[from])
		}
		if from.Terminal() != (want[from] == "") || from.Active() != (from == Queued || from == Running || from == Waiting || from == NeedsReview) {
			t.Errorf("%s: terminal=%v active=%v", from, from.Terminal(), from.Active())
		}
	}
	if err := AssertTransition(Queued, "paused"); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("unknown target: %v", err)
	}
}

func TestKind(t *testing.T) {
	for err, want := range map[error]string{
		nil: "", ErrStaleLease: "stale_lease", ErrConflict: "conflict", ErrNotFound: "not_found",
		ErrInvalidTransition: "invalid_transition", ErrInvalidArgument: "invalid_argument", errors.New("x"): "other",
	} {
		if got := Kind(err); got != want {
			t.Errorf("Kind(%v) = %q, want %q", err, got, want)
		}
	}
	if !errors.Is(ErrStaleLease, ErrConflict) {
		t.Error("a stale lease is not a conflict")
	}
}

// Stored times must order as text as they do as times: SQL compares
// expiries as strings.
func TestTimeLayoutOrders(t *testing.T) {
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	times := []time.Time{base, base.Add(time.Nanosecond), base.Add(time.Millisecond), base.Add(time.Second), base.Add(10 * time.Hour),
		base.Add(11 * time.Hour).In(time.FixedZone("x", 3600))}
	for i := 1; i < len(times); i++ {
		if !(FormatTime(times[i-1]) < FormatTime(times[i])) {
			t.Errorf("%s !< %s", FormatTime(times[i-1]), FormatTime(times[i]))
		}
		back, err := ParseTime(FormatTime(times[i]))
		if err != nil || !back.Equal(times[i]) {
			t.Errorf("round trip of %v: %v, %v", times[i], back, err)
		}
	}
}

func TestFingerprintIgnoresIDContextAndTime(t *testing.T) {
	a := NewRun{ID: "a", TenantID: "t", SessionID: "s", State: json.RawMessage(`{"b":1,"a":2}`), Context: json.RawMessage(`{"x":1}`), Now: time.Unix(1, 0)}
	b := a
	b.ID, b.Context, b.Now, b.State = "b", json.RawMessage(`{"y":2}`), time.Unix(2, 0), json.RawMessage(`{"a":2, "b":1}`)
	fa, _ := Fingerprint(a)
	fb, _ := Fingerprint(b)
	if fa != fb {
		t.Fatal("the same request under another id, context or time got another fingerprint")
	}
	b.Priority = 1
	if fc, _ := Fingerprint(b); fc == fa {
		t.Fatal("another priority got the same fingerprint")
	}
}

func TestInvariantsFindBrokenTables(t *testing.T) {
	run := func(id, session string, s Status) RunRow { return RunRow{ID: id, SessionID: session, Status: s} }
	d := &Dump{
		Runs:        []RunRow{run("a", "s", Queued), run("b", "s", Running)},
		Events:      []EventRow{{RunID: "a", Sequence: 1}, {RunID: "a", Sequence: 3}, {RunID: "b", Sequence: 1, Type: EventClaimed, Data: `{"fencing_token":2}`}},
		Checkpoints: []CheckpointRow{{RunID: "a", Sequence: 2}},
		Leases:      []LeaseRow{{RunID: "b", Token: 2}},
	}
	got := strings.Join(Invariants(d), "\n")
	for _, want := range []string{"one active run per session", "event sequence without gaps", "checkpoint sequence without gaps", "fencing tokens strictly increase"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
}
