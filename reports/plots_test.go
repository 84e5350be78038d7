package reports

import (
	"strings"
	"testing"

	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/linearizability"
)

func TestCharts(t *testing.T) {
	m := Measure(synthHistory(3000, 3))
	faults := []evidence.Fault{{Fault: "kill-leader", StartNS: 4e9, EndNS: 6e9}, {Fault: "partition", StartNS: 8e9}}
	cs, err := charts(&m, faults)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 3 {
		t.Fatalf("%d charts, want latency, throughput and conflict rate", len(cs))
	}
	for _, c := range cs {
		if !strings.HasPrefix(c.SVG, "<svg") || !strings.HasSuffix(c.SVG, "</svg>") {
			t.Errorf("%s: not an inline <svg> element", c.Title)
		}
		if strings.Contains(c.SVG, "<?xml") {
			t.Errorf("%s: XML prologue kept", c.Title)
		}
		if last := c.Keys[len(c.Keys)-1]; last.Class != "k-fault" {
			t.Errorf("%s: no fault key in the legend: %+v", c.Title, c.Keys)
		}
		if n := len(c.SVG); n > 40_000 {
			t.Errorf("%s: %d bytes of SVG; the series is not downsampled", c.Title, n)
		}
	}
}

func TestChartsWithoutCommitsOrHistory(t *testing.T) {
	if cs, err := charts(nil, nil); cs != nil || err != nil {
		t.Errorf("no history: %v, %v", cs, err)
	}
	// Reads only: no conflict rate to draw, and the chart is still drawn.
	h := linearizability.History{Ops: []linearizability.Operation{
		op(linearizability.KindLoad, 0, 1, linearizability.OutcomeOK),
		op(linearizability.KindLoad, 5, 5, linearizability.OutcomeOK), // zero latency on a log axis
	}}
	m := Measure(h)
	if _, err := charts(&m, nil); err != nil {
		t.Fatal(err)
	}
}

func TestTickLabel(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0", 0.15000000000000002: "0.15", 0.001: "0.001", 25000: "25k", 1500: "1.5k", 2e6: "2M", 100: "100",
	} {
		if got := tickLabel(v); got != want {
			t.Errorf("tickLabel(%v) = %q, want %q", v, got, want)
		}
	}
}
