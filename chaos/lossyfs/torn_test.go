package lossyfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A torn cut lets each unsynced page within the durable size through or
// not, and a prefix of the appended pages; the same seed tears the same
// way.

// tornOutcome writes 4 durable pages of 'a', overwrites them with 'b' and
// appends 4 pages of 'c' without syncing, cuts with the given seed and
// returns what the file holds.
func tornOutcome(t *testing.T, seed uint64) string {
	t.Helper()
	f, mp, _ := mountForTest(t, Options{Torn: true, Seed: seed})
	path := filepath.Join(mp, "torn")
	durableFile(t, path, strings.Repeat("a", 4*pageSize))
	writeFile(t, path, strings.Repeat("b", 4*pageSize)+strings.Repeat("c", 4*pageSize), false)
	r := cut(t, f)
	t.Logf("seed %d: %+v", seed, r)
	got := readFile(t, path)
	checkTorn(t, got)
	return got
}

// checkTorn checks that each page is wholly old or wholly new, and that the
// appended part is a prefix.
func checkTorn(t *testing.T, got string) {
	t.Helper()
	if len(got) < 4*pageSize || len(got) > 8*pageSize {
		t.Fatalf("size %d, want between 4 and 8 pages", len(got))
	}
	for p := 0; p*pageSize < len(got); p++ {
		page := got[p*pageSize : min((p+1)*pageSize, len(got))]
		want := []string{"a", "b"}
		if p >= 4 {
			want = []string{"c"}
		}
		ok := false
		for _, w := range want {
			ok = ok || page == strings.Repeat(w, len(page))
		}
		if !ok {
			t.Errorf("page %d is neither of %v", p, want)
		}
	}
}

// shape summarizes a torn outcome: the letter of each page.
func shape(s string) string {
	var b strings.Builder
	for p := 0; p*pageSize < len(s); p++ {
		b.WriteByte(s[p*pageSize])
	}
	return b.String()
}

func TestTornCutIsPerPageAndSeeded(t *testing.T) {
	shapes := map[string]bool{}
	for seed := uint64(1); seed <= 6; seed++ {
		first := tornOutcome(t, seed)
		if again := tornOutcome(t, seed); shape(again) != shape(first) {
			t.Errorf("seed %d tore two ways: %s and %s", seed, shape(first), shape(again))
		}
		shapes[shape(first)] = true
	}
	if len(shapes) < 2 {
		t.Errorf("six seeds tore one way only: %v", shapes)
	}
	t.Logf("shapes: %v", shapes)
}

func TestTornCutNeverKeepsAnUnnamedFile(t *testing.T) {
	f, mp, _ := mountForTest(t, Options{Torn: true, Seed: 1})
	path := filepath.Join(mp, "new")
	writeFile(t, path, "x", false)
	cut(t, f)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("an unsynced create survived a torn cut: %v", err)
	}
}
