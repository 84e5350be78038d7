package backends

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplicasNotApplicable: a backend without replicas says what it
// lacks, and a libsql+replica URL with no sqld here is refused with the
// NOT RUN reason.
func TestReplicasNotApplicable(t *testing.T) {
	sq, err := Resolve("sqlite:/tmp/x.db")
	if err != nil {
		t.Fatal(err)
	}
	if missing, why := sq.Lacks([]Capability{Replicas}); len(missing) != 1 || !strings.Contains(why, "replicas") {
		t.Errorf("sqlite: lacks %v: %q", missing, why)
	}
	if _, err := sq.Replicas(context.Background(), ""); err == nil {
		t.Errorf("sqlite: opened replicas")
	}
	t.Setenv("SQLD", filepath.Join(t.TempDir(), "no-sqld"))
	rt, err := Resolve("libsql+replica:" + filepath.Join(t.TempDir(), "r.db") + "?image=storecheck.invalid/none:0")
	if err != nil {
		t.Fatal(err)
	}
	if !rt.Has(Replicas) {
		t.Fatalf("libsql+replica: has no replicas: %v", rt.Caps)
	}
	_, err = rt.Replicas(context.Background(), "")
	if err == nil {
		t.Skip("a sqld or the image is available here: the NOT RUN path cannot be shown")
	}
	if !errors.Is(err, ErrReplicasUnavailable) || !strings.Contains(err.Error(), "sqld") {
		t.Errorf("no sqld: %v, want ErrReplicasUnavailable naming sqld", err)
	}
}
