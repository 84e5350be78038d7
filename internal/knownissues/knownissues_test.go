package knownissues

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMatch(t *testing.T) {
	dir := t.TempDir()
	sig := All()[0].Signature
	if err := os.MkdirAll(filepath.Join(dir, "faults"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(text string) {
		if err := os.WriteFile(filepath.Join(dir, "faults", "history.jsonl"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"kind":"commit","output":{"outcome":"indeterminate","error":"COMMIT: ` + sig + `"}}` + "\n")
	if is := Match("libsql+replica", "replica-lag-conflict", "atomicity", dir); is == nil || is.ID != "libsql-delegated-txn-autocommit" {
		t.Errorf("the signature in a level's history: %v", is)
	}
	if is := Match("sqlite", "replica-lag-conflict", "atomicity", dir); is != nil {
		t.Errorf("another backend matched %s", is.ID)
	}
	if is := Match("libsql+replica", "replica-lag-conflict", "lost update", dir); is != nil {
		t.Errorf("a guarantee the bug cannot break matched %s", is.ID)
	}
	write(`{"kind":"commit","output":{"outcome":"ok"}}` + "\n")
	if is := Match("libsql+replica", "replica-lag-conflict", "atomicity", dir); is != nil {
		t.Errorf("a FAIL without the signature matched %s", is.ID)
	}
	if Lookup("libsql-delegated-txn-autocommit") == nil || Lookup("nope") != nil {
		t.Errorf("Lookup")
	}
}
