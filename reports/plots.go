package reports

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"github.com/storecheck/storecheck/evidence"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Plot size and font.
const (
	plotWidth    = 4.4 * vg.Inch
	plotHeight   = 2.5 * vg.Inch
	plotTypeface = "Liberation"
	plotVariant  = "Sans"
)

// rgba is a colour from 0xRRGGBBAA.
func rgba(c uint32) color.NRGBA {
	return color.NRGBA{R: uint8(c >> 24), G: uint8(c >> 16), B: uint8(c >> 8), A: uint8(c)}
}

// chart is one rendered plot.
type chart struct {
	Title string
	// Keys are the legend, drawn in HTML beside the title.
	Keys []key
	// SVG is the <svg> element, without the XML prologue.
	SVG string
}

// key is one legend entry; Class is its CSS class (k-…), which sets its
// colour to the line's.
type key struct {
	Name, Class string
}

// line is one line of a chart.
type line struct {
	key   key
	xys   plotter.XYs
	color color.Color
	fill  color.Color
}

// chartSpec is one chart to draw.
type chartSpec struct {
	title, ylabel string
	// log draws the y axis on a log scale (latency spans decades).
	log   bool
	lines []line
}

// Smallest latency a log axis shows, in milliseconds.
const minLogMS = 1e-3

// charts draws the three plots of a measured run: latency, throughput and
// conflict rate over time, each with the fault windows shaded.
func charts(m *Metrics, faults []evidence.Fault) ([]chart, error) {
	if m == nil || len(m.Series) == 0 {
		return nil, nil
	}
	var p50, p99, rate, conflicts plotter.XYs
	for _, b := range m.Series {
		x := b.Mid()
		if b.Timed > 0 {
			p50 = append(p50, plotter.XY{X: x, Y: max(b.P50, minLogMS)})
			p99 = append(p99, plotter.XY{X: x, Y: max(b.P99, minLogMS)})
		}
		rate = append(rate, plotter.XY{X: x, Y: b.Throughput()})
		if r, ok := b.ConflictRate(); ok {
			conflicts = append(conflicts, plotter.XY{X: x, Y: 100 * r})
		}
	}
	specs := []chartSpec{
		{"Latency", "latency (ms, log scale)", true, []line{
			{key{"p50", "k-p50"}, p50, rgba(0x1f6fb5ff), nil},
			{key{"p99", "k-p99"}, p99, rgba(0xe07b12ff), nil},
		}},
		{"Throughput", "completed ops/s", false, []line{{key{"ops/s", "k-rate"}, rate, rgba(0x2e8b57ff), rgba(0x2e8b5730)}}},
		{"Conflict rate", "conflicts per commit (%)", false, []line{{key{"conflicts %", "k-conflict"}, conflicts, rgba(0x8e44adff), nil}}},
	}
	out := make([]chart, 0, len(specs))
	for _, s := range specs {
		svg, err := drawChart(m, faults, s)
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", strings.ToLower(s.title), err)
		}
		c := chart{Title: s.title, SVG: svg}
		for _, l := range s.lines {
			c.Keys = append(c.Keys, l.key)
		}
		if len(faults) > 0 {
			c.Keys = append(c.Keys, key{"fault window", "k-fault"})
		}
		out = append(out, c)
	}
	return out, nil
}

// drawChart draws a chart over the traffic span of m, fault windows shaded
// behind its lines, and returns the SVG.
func drawChart(m *Metrics, faults []evidence.Fault, s chartSpec) (string, error) {
	p := plot.New()
	setFonts(p)
	p.X.Label.Text, p.Y.Label.Text = "time (s)", s.ylabel
	p.X.Tick.Marker = readableTicks(plot.DefaultTicks{})
	xmin, xmax := float64(m.Start)/1e9, float64(m.End)/1e9
	for _, f := range faults {
		xmin = min(xmin, float64(f.StartNS)/1e9)
		xmax = max(xmax, float64(f.Until(m.End))/1e9)
	}
	ymin, ymax := yRange(s)
	p.Add(plotter.NewGrid())
	if err := shadeFaults(p, faults, m.End, ymin, ymax); err != nil {
		return "", err
	}
	for _, l := range s.lines {
		if len(l.xys) == 0 {
			continue
		}
		ln, err := plotter.NewLine(l.xys)
		if err != nil {
			return "", err
		}
		ln.Color, ln.Width = l.color, vg.Points(1.3)
		if l.fill != nil {
			ln.FillColor = l.fill
		}
		p.Add(ln)
	}
	p.X.Min, p.X.Max = xmin, max(xmax, xmin+1e-3)
	p.Y.Min, p.Y.Max = ymin, ymax
	if s.log {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = readableTicks(plot.LogTicks{Prec: -1})
	} else {
		p.Y.Tick.Marker = readableTicks(plot.DefaultTicks{})
	}
	c := vgsvg.New(plotWidth, plotHeight)
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return "", err
	}
	return inlineSVG(buf.String()), nil
}

// yRange is the y axis of a chart: from 0 to a little above the highest
// point, or on a log scale whole decades around the points.
func yRange(s chartSpec) (lo, hi float64) {
	lo, hi = math.Inf(1), 0.0
	for _, l := range s.lines {
		for _, xy := range l.xys {
			lo, hi = min(lo, xy.Y), max(hi, xy.Y)
		}
	}
	if !s.log {
		if hi <= 0 {
			hi = 1
		}
		return 0, hi * 1.08
	}
	if hi <= 0 {
		return minLogMS, 1
	}
	lo = math.Pow(10, math.Floor(math.Log10(max(lo, minLogMS))))
	hi = math.Pow(10, math.Ceil(math.Log10(hi)))
	if hi <= lo {
		hi = lo * 10
	}
	return lo, hi
}

// shadeFaults adds one shaded rectangle per fault window.
func shadeFaults(p *plot.Plot, faults []evidence.Fault, runEnd int64, ymin, ymax float64) error {
	for _, f := range faults {
		x0, x1 := float64(f.StartNS)/1e9, float64(f.Until(runEnd))/1e9
		poly, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: ymin}, {X: x1, Y: ymin}, {X: x1, Y: ymax}, {X: x0, Y: ymax}})
		if err != nil {
			return err
		}
		poly.Color, poly.LineStyle.Width = rgba(0xd6272838), 0
		p.Add(poly)
	}
	return nil
}

// maxTickLabels bounds the labelled ticks of an axis; more crowd a small
// plot.
const maxTickLabels = 5

// readableTicks relabels t's labelled ticks compactly ("25k", not
// "25000.00"), and, when there are too many, only every second or third.
func readableTicks(t plot.Ticker) plot.Ticker {
	return plot.TickerFunc(func(lo, hi float64) []plot.Tick {
		ts := t.Ticks(lo, hi)
		labelled := 0
		for _, tk := range ts {
			if tk.Label != "" {
				labelled++
			}
		}
		stride := (labelled + maxTickLabels - 1) / maxTickLabels
		n := 0
		for i := range ts {
			if ts[i].Label == "" {
				continue
			}
			if n%stride == 0 {
				ts[i].Label = tickLabel(ts[i].Value)
			} else {
				ts[i].Label = ""
			}
			n++
		}
		return ts
	})
}

// tickLabel is a compact number: 4 significant digits, k and M suffixes.
func tickLabel(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 4, 64) + "M"
	case a >= 1e3:
		return strconv.FormatFloat(v/1e3, 'g', 4, 64) + "k"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// setFonts sets a sans-serif font on every text of p.
func setFonts(p *plot.Plot) {
	for _, f := range []*font.Font{
		&p.Title.TextStyle.Font, &p.X.Label.TextStyle.Font, &p.Y.Label.TextStyle.Font,
		&p.X.Tick.Label.Font, &p.Y.Tick.Label.Font, &p.Legend.TextStyle.Font,
	} {
		f.Typeface, f.Variant = plotTypeface, plotVariant
	}
	p.X.Label.TextStyle.Font.Size, p.Y.Label.TextStyle.Font.Size = vg.Points(10), vg.Points(10)
	p.X.Tick.Label.Font.Size, p.Y.Tick.Label.Font.Size = vg.Points(8.5), vg.Points(8.5)
}

// inlineSVG strips what an SVG file needs and an HTML page does not: the XML
// declaration and the generator comment.
func inlineSVG(s string) string {
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	return strings.TrimSpace(s)
}
