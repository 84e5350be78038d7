package linearizability

import "testing"

// BenchmarkObjectID is identifying one trace entry, as the recorder does
// for each entry of every trace read (up to the trace's 200): one whose
// keys come sorted, as canonical JSON has them, and one whose do not.
func BenchmarkObjectID(b *testing.B) {
	for _, c := range []struct{ name, entry string }{
		{"canonical", `{"kind":"commit","token":"c1-457"}`},
		{"unsorted", `{"token":"c1-457","kind":"commit"}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			raw := []byte(c.entry)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ObjectID(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
