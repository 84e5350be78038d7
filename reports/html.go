package reports

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"slices"
	"strconv"

	"github.com/storecheck/storecheck/linearizability"
)

//go:embed templates/index.gohtml
var indexTemplate string

// maxPageSteps bounds the minimal failing sequence shown per cell.
const maxPageSteps = 200

// page is what the index.html template reads.
type page struct {
	*report
	Matrix matrixView
	Perf   []perfRow
	Runs   []runSection
}

// matrixView is the verdict matrix: a row per backend and a column per
// scenario, or, when there are more scenarios than backends (one backend's
// qualification runs a dozen), a row per scenario and a column per backend,
// so that the cells, which carry a failure's reason, stay wide enough to
// read.
type matrixView struct {
	// ByBackend says the rows are backends (and the columns scenarios).
	ByBackend bool
	Columns   []string
	Rows      []matrixRow
}

// matrixRow is one row of the verdict matrix: per column, the row's runs
// (none when the pair was not planned).
type matrixRow struct {
	Label string
	Cells [][]*runView
}

// perfRow is one run of the performance table.
type perfRow struct {
	*runView
	Throughput, P50, P95, P99, CommitP99, Conflicts, Indeterminate string
	// Bar is the throughput relative to the best backend of the scenario.
	Bar template.CSS
}

// runSection is one run's detail: artifacts, faults and plots.
type runSection struct {
	*runView
	Charts []chart
	Kinds  []kindRow
}

// kindRow is one operation kind of a run's latency table.
type kindRow struct {
	Kind                      string
	Count, Timed              int
	P50, P95, P99, Max, Share string
}

// renderHTML writes index.html.
func renderHTML(rep *report) ([]byte, error) {
	pg := &page{report: rep, Matrix: matrix(rep), Perf: perfRows(rep)}
	for _, v := range rep.Runs {
		cs, err := charts(v.Measured, v.Faults)
		if err != nil {
			// A plot that cannot be drawn must not cost the report.
			v.Notes = append(v.Notes, "plots not drawn: "+err.Error())
		}
		pg.Runs = append(pg.Runs, runSection{runView: v, Charts: cs, Kinds: kindRows(v)})
	}
	t, err := template.New("index").Funcs(template.FuncMap{
		"class":    verdictClass,
		"duration": fmtDuration,
		"count":    fmtCount,
		"steps":    pageSteps,
		"secs":     func(ns int64) string { return strconv.FormatFloat(float64(ns)/1e9, 'f', 3, 64) },
		"svg":      func(s string) template.HTML { return template.HTML(s) }, // drawn by gonum from numbers; its text is escaped
		"date":     func() string { return rep.Date.Format("2006-01-02 15:04:05 MST") },
	}).Parse(indexTemplate)
	if err != nil {
		return nil, fmt.Errorf("parse template: %w", err)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, pg); err != nil {
		return nil, fmt.Errorf("execute template: %w", err)
	}
	return buf.Bytes(), nil
}

// verdictClass is the CSS class of a verdict.
func verdictClass(v Verdict) string {
	switch v {
	case Pass:
		return "pass"
	case Fail:
		return "fail"
	case Interrupted:
		return "interrupted"
	}
	return "notrun"
}

// pageSteps bounds a minimal failing sequence for the page.
func pageSteps(steps []string) []string {
	if len(steps) <= maxPageSteps {
		return steps
	}
	return append(steps[:maxPageSteps:maxPageSteps], fmt.Sprintf("… %d more steps", len(steps)-maxPageSteps))
}

// matrix lays the runs out by backend and scenario, the longer of the two
// down the page (backends when there are as many of each).
func matrix(rep *report) matrixView {
	m := matrixView{ByBackend: len(rep.Backends) >= len(rep.Scenarios)}
	rowsOf, colsOf := rep.Backends, rep.Scenarios
	if !m.ByBackend {
		rowsOf, colsOf = rep.Scenarios, rep.Backends
	}
	m.Columns = colsOf
	m.Rows = make([]matrixRow, len(rowsOf))
	for i, label := range rowsOf {
		m.Rows[i] = matrixRow{Label: label, Cells: make([][]*runView, len(colsOf))}
	}
	for _, v := range rep.Runs {
		i, j := indexOf(rep.Backends, v.Backend), indexOf(rep.Scenarios, v.Scenario)
		if !m.ByBackend {
			i, j = j, i
		}
		m.Rows[i].Cells[j] = append(m.Rows[i].Cells[j], v)
	}
	return m
}

func indexOf(list []string, s string) int { return slices.Index(list, s) }

// perfRows lists the runs with figures, grouped by scenario so that the
// backends of one scenario sit side by side.
func perfRows(rep *report) []perfRow {
	var rows []perfRow
	for _, sc := range rep.Scenarios {
		best := 0.0
		for _, v := range rep.Runs {
			if x, ok := v.throughput(); ok && v.Scenario == sc {
				best = max(best, x)
			}
		}
		for _, v := range rep.Runs {
			if v.Scenario != sc || (v.Ops == 0 && v.Measured == nil) {
				continue
			}
			all, aok := v.latency(AllKinds)
			commit, cok := v.latency("commit")
			rate, rok := v.conflictRate()
			x, xok := v.throughput()
			ind, iok := v.indeterminate()
			row := perfRow{
				runView: v, Throughput: fmtRate(x, xok),
				P50: fmtMS(all.P50, aok), P95: fmtMS(all.P95, aok), P99: fmtMS(all.P99, aok),
				CommitP99: fmtMS(commit.P99, cok), Conflicts: fmtPct(rate, rok), Indeterminate: none,
			}
			if iok {
				row.Indeterminate = fmtThousands(int64(ind))
			}
			if xok && best > 0 {
				row.Bar = template.CSS(fmt.Sprintf("width:%.1f%%", 100*x/best))
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// kindRows is a run's latency table: every kind it recorded, in a fixed
// order, then all kinds together.
func kindRows(v *runView) []kindRow {
	lat := v.Latency
	if len(lat) == 0 && v.Measured != nil {
		lat = v.Measured.Latency
	}
	total := lat[AllKinds].Count
	var rows []kindRow
	for _, k := range kindOrder(lat) {
		p := lat[k]
		row := kindRow{Kind: k, Count: p.Count, Timed: p.Timed, P50: none, P95: none, P99: none, Max: none, Share: none}
		if p.Timed > 0 {
			row.P50, row.P95, row.P99, row.Max = fmtMS(p.P50, true), fmtMS(p.P95, true), fmtMS(p.P99, true), fmtMS(p.Max, true)
		}
		if total > 0 {
			row.Share = fmtPct(float64(p.Count)/float64(total), true)
		}
		rows = append(rows, row)
	}
	return rows
}

// kindOrder is the keys of lat: the known kinds first in their fixed order,
// any others sorted, AllKinds last.
func kindOrder(lat map[string]Percentiles) []string {
	var keys []string
	for _, k := range linearizability.Kinds() {
		if _, ok := lat[string(k)]; ok {
			keys = append(keys, string(k))
		}
	}
	var rest []string
	for k := range lat {
		if k != AllKinds && indexOf(keys, k) < 0 {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	keys = append(keys, rest...)
	if _, ok := lat[AllKinds]; ok {
		keys = append(keys, AllKinds)
	}
	return keys
}
