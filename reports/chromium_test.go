package reports

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// chromiumTimeout bounds one headless Chromium run.
const chromiumTimeout = 2 * time.Minute

// chromiumBinary finds a headless-capable Chromium, or skips the test: the
// page is then not proven to render, and the report says NOT RUN.
func chromiumBinary(t *testing.T) string {
	t.Helper()
	names := []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}
	for _, name := range names {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	t.Skipf("NOT RUN: chromium not installed: none of %s on PATH (CI installs it in .ci/run with apt-get install -y chromium)", strings.Join(names, ", "))
	return ""
}

// runChromium runs headless Chromium on page with args, and returns its
// stdout and stderr.
func runChromium(t *testing.T, bin, page string, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), chromiumTimeout)
	defer cancel()
	base := []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(), "--window-size=1280,2000",
		"--enable-logging=stderr", "--v=0",
	}
	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), "file://"+filepath.ToSlash(abs))...)
	cmd.WaitDelay = 5 * time.Second
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, errOut.String())
	}
	return out.String(), errOut.String()
}

// pageErrors are the lines of Chromium's log that the page caused: any
// console message (the page has no script, so none is expected), an
// uncaught error, a blocked or failed load.
var pageErrors = regexp.MustCompile(`(?i):CONSOLE|uncaught|Content Security Policy|Failed to load|net::ERR_`)

func checkChromiumLog(t *testing.T, stderr string) {
	t.Helper()
	for _, line := range strings.Split(stderr, "\n") {
		if pageErrors.MatchString(line) {
			t.Errorf("chromium reported: %s", line)
		}
	}
}

func TestRenderInChromium(t *testing.T) {
	bin := chromiumBinary(t)
	if testing.Short() {
		t.Skip("NOT RUN: -short: headless Chromium takes seconds")
	}
	page := filepath.Join(renderFixture(t), HTMLFile)

	shot := filepath.Join(t.TempDir(), "index.png")
	_, stderr := runChromium(t, bin, page, "--screenshot="+shot)
	checkChromiumLog(t, stderr)
	checkScreenshot(t, shot)

	dom, stderr := runChromium(t, bin, page, "--dump-dom")
	checkChromiumLog(t, stderr)
	for _, want := range []string{`<table class="matrix">`, `<div class="cell fail">`, `<div class="cell notrun">`, `<div class="cell interrupted">`, `<svg `, "no lost update"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the DOM Chromium built lacks %q", want)
		}
	}
	if n := strings.Count(dom, `<div class="cell `); n != 6 {
		t.Errorf("the DOM holds %d matrix cells, want 6", n)
	}
}

// checkScreenshot asserts the screenshot is the window's size and shows
// more than a blank page.
func checkScreenshot(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 2000 {
		t.Errorf("screenshot is %v, want 1280×2000", b.Size())
	}
	if n := colours(img, 1000); n < 50 {
		t.Errorf("screenshot has %d colours; the page looks blank", n)
	}
}

// colours counts the distinct colours of img, up to limit.
func colours(img image.Image, limit int) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bl, a}] = true
			if len(seen) >= limit {
				return len(seen)
			}
		}
	}
	return len(seen)
}

func TestPageErrorsPattern(t *testing.T) {
	// Lines Chromium 156 logs (with --enable-logging=stderr --v=0) for a
	// page error, and noise it logs in a container for every page.
	for line, want := range map[string]bool{
		`[9259:9259:1130/042909.475695:INFO:CONSOLE:1] "Uncaught ReferenceError: foo is not defined", source: file:///x.html (1)`:                               true,
		`[9069:9069:1130/042903.445739:INFO:CONSOLE:1] "Loading the image 'http://example.com/x.png' violates the following Content Security Policy directive"`: true,
		`[2698:2729:1130/042447.629813:ERROR:dbus/bus.cc:405] Failed to connect to the bus: Failed to connect to socket /run/dbus/system_bus_socket`:            false,
		`[5355:5355:1130/042716.593234:WARNING:media/gpu/vaapi/vaapi_wrapper.cc:1655] drmGetDevices2() has not found any devices`:                               false,
	} {
		if got := pageErrors.MatchString(line); got != want {
			t.Errorf("pageErrors.MatchString(%q) = %v, want %v", line, got, want)
		}
	}
}
