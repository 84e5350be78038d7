package model

import (
	"encoding/json"
	"fmt"
)

// ParseEvent reads an event stored as JSON. Stores keep events as their
// canonical JSON (Event.Canonical) and read them back with every pending
// outbox listing; such a document is read in one pass, anything else by
// encoding/json (parseEventGeneral), which defines the result
// (TestParseEventAgreesWithGeneral).
func ParseEvent(s string) (Event, error) {
	if ev, ok := parseCanonicalEvent([]byte(s)); ok {
		return ev, nil
	}
	return parseEventGeneral(s)
}

// parseEventGeneral is ParseEvent for any document.
func parseEventGeneral(s string) (Event, error) {
	var ev Event
	if err := json.Unmarshal([]byte(s), &ev); err != nil {
		return Event{}, fmt.Errorf("event json: %w", err)
	}
	if len(ev.Data) > 0 {
		c, err := CanonicalJSON(ev.Data)
		if err != nil {
			return Event{}, fmt.Errorf("event data: %w", err)
		}
		ev.Data = json.RawMessage(c)
	}
	return ev, nil
}

// parseCanonicalEvent reads data when it is an event in the canonical form
// with no key but its own, and says whether it did.
func parseCanonicalEvent(data []byte) (Event, bool) {
	var ev Event
	if !canonicalMembers(data, ev.setMember) {
		return Event{}, false
	}
	return ev, true
}

// setMember sets the field key names to v, a canonical JSON value, and says
// whether it could: false for an id or name that is no string, and for any
// other key (encoding/json matches keys regardless of case, and skips
// unknown ones: the general path decides those).
func (ev *Event) setMember(key, v []byte) bool {
	switch string(key) {
	case "data":
		ev.Data = append(json.RawMessage(nil), v...)
		return true
	case "id":
		return plainString(v, &ev.ID)
	case "name":
		return plainString(v, &ev.Name)
	}
	return false
}
