package runstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/storecheck/storecheck/model"
)

// TimeLayout is how every timestamp is stored: UTC with nine fractional
// digits, so that the text of two times orders as the times do and SQL can
// compare expiries as strings.
//
// Decision: the seed stores datetime.isoformat(), whose width varies (no
// fraction when microseconds are 0), so its string comparisons of expiries
// can misorder; a fixed width cannot.
const TimeLayout = "2006-01-02T15:04:05.000000000Z"

// FormatTime is t in TimeLayout.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// ParseTime reads a TimeLayout timestamp.
func ParseTime(s string) (time.Time, error) {
	t, err := time.Parse(TimeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("stored timestamp %q: %w", s, err)
	}
	return t.UTC(), nil
}

// Object returns raw as canonical JSON, which must be an object; nil or
// empty stands for {}. The error wraps ErrInvalidArgument.
func Object(raw json.RawMessage, what string) (string, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "{}", nil
	}
	s, err := model.CanonicalJSON(raw)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrInvalidArgument, what, err)
	}
	if s[0] != '{' {
		return "", fmt.Errorf("%w: %s must be a JSON object, got %.40s", ErrInvalidArgument, what, s)
	}
	return s, nil
}

// StringList returns list as a canonical JSON array; nil stands for [].
func StringList(list []string) string {
	if list == nil {
		list = []string{}
	}
	b, err := json.Marshal(list)
	if err != nil {
		panic(fmt.Sprintf("runs: encode string list: %v", err)) // strings always encode
	}
	s, _ := model.CanonicalJSON(b)
	return s
}

// parseStringList reads a JSON array of strings.
func parseStringList(s, what string) ([]string, error) {
	var out []string
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, fmt.Errorf("stored %s %.40q: %w", what, s, err)
	}
	if out == nil {
		out = []string{}
	}
	return out, nil
}

// Fingerprint identifies a create_run request for its idempotency key: the
// SHA-256 of the canonical JSON of plan, revision, session, tenant, state,
// next nodes and priority, as the seed's _fingerprint. The context and the
// run id are not part of it, so a retry with a fresh run id still matches.
func Fingerprint(req NewRun) (string, error) {
	state, err := Object(req.State, "state")
	if err != nil {
		return "", err
	}
	doc := fmt.Sprintf(`{"next_nodes":%s,"plan_id":%q,"priority":%d,"revision_id":%q,"session_id":%q,"state":%s,"tenant_id":%q}`,
		StringList(req.NextNodes), req.PlanID, req.Priority, req.RevisionID, req.SessionID, state, req.TenantID)
	canon, err := model.CanonicalJSON([]byte(doc))
	if err != nil {
		return "", fmt.Errorf("fingerprint: %w", err)
	}
	sum := sha256.Sum256([]byte(canon))
	return hex.EncodeToString(sum[:]), nil
}

// LeaseID is the id of a run's lease row: the first 16 bytes of the SHA-256
// of the run id, written as a UUID, as the seed derives it.
func LeaseID(runID string) string {
	b := sha256.Sum256([]byte(runID))
	h := hex.EncodeToString(b[:16])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// ClaimedData is the data of a run.claimed event.
func ClaimedData(worker string, token int64) string {
	return mustObject(map[string]any{"worker_id": worker, "fencing_token": token})
}

// mustObject encodes a map of plain values canonically.
func mustObject(v map[string]any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("runs: encode event data: %v", err)) // plain values always encode
	}
	s, err := model.CanonicalJSON(b)
	if err != nil {
		panic(fmt.Sprintf("runs: canonical event data: %v", err))
	}
	return s
}

// StateChangedData is the data of a run.state.changed event.
func StateChangedData(from, to Status) string {
	return mustObject(map[string]any{"from": string(from), "to": string(to)})
}

// CheckpointData is the data of a run.checkpoint.created event.
func CheckpointData(id string, seq int64) string {
	return mustObject(map[string]any{"checkpoint_id": id, "sequence": seq})
}

// LeaseExpiredData is the data of a run.lease.expired event.
func LeaseExpiredData(token int64) string {
	return mustObject(map[string]any{"fencing_token": token})
}

// InterruptCreatedData is the data of a run.interrupt.created event.
func InterruptCreatedData(id, kind string) string {
	return mustObject(map[string]any{"interrupt_id": id, "kind": kind})
}

// InterruptDecidedData is the data of a run.interrupt.decided event.
func InterruptDecidedData(id string, kind DecisionKind, actor string) string {
	return mustObject(map[string]any{"interrupt_id": id, "decision": string(kind), "actor_id": actor})
}

// InterruptExpiredData is the data of a run.interrupt.expired event.
func InterruptExpiredData(id string) string { return mustObject(map[string]any{"interrupt_id": id}) }

// CreatedData is the data of a run.created event.
func CreatedData() string { return mustObject(map[string]any{"status": string(Queued)}) }

// FinishData is the event data of a finish_claim request.
func FinishData(req Finish) (string, error) {
	if req.EventData == nil {
		return mustObject(map[string]any{"status": string(req.Target)}), nil
	}
	return Object(req.EventData, "event data")
}

// FinishEventType is the event type of a finish_claim request.
func FinishEventType(req Finish) string {
	if req.EventType == "" {
		return EventExecutionDone
	}
	return req.EventType
}
