package lossyfs

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// The tests re-execute this test binary as worker processes that use the
// mount, as the harness's workers do: a worker writes to a SQLite database
// or takes a lock in the mount, reports on stdout, and waits to be killed.

// workerEnv carries a worker's configuration (JSON) to the re-executed
// test binary.
const workerEnv = "LOSSYFS_TEST_WORKER"

// workerConfig is what a worker does.
type workerConfig struct {
	// Job is "sqlite" (commit rows), "check" (report the integrity and
	// rows of a database), "lock" (try an fcntl write lock on Path),
	// "mmap" (write through a shared mapping of Path and fsync),
	// "inprocess" (mount on Path/mnt and use SQLite in that mount, in the
	// serving process, with locking_mode=EXCLUSIVE) or
	// "mount" (mount a lossy file system on Path/mnt over Path/backing,
	// and die with it mounted).
	Job  string `json:"job"`
	Path string `json:"path"`
	// Synchronous settings and how many rows to commit under each, one row
	// a transaction, in order: {"FULL", 10}, {"OFF", 40}.
	Phases []phase `json:"phases"`
	// First is the first row's id.
	First int `json:"first"`
	// JournalMode is SQLite's journal mode, WAL when empty.
	JournalMode string `json:"journal_mode,omitempty"`
}

type phase struct {
	Synchronous string `json:"synchronous"`
	Rows        int    `json:"rows"`
}

func TestMain(m *testing.M) {
	if cfg := os.Getenv(workerEnv); cfg != "" {
		os.Exit(runWorker(cfg))
	}
	os.Exit(m.Run())
}

// runWorker does the job, prints "done" and waits for its parent to kill
// it (or exits after a minute, should the parent be gone).
func runWorker(raw string) int {
	var cfg workerConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		fmt.Println("error:", err)
		return 2
	}
	var err error
	switch cfg.Job {
	case "sqlite":
		err = commitRows(cfg)
	case "lock":
		err = tryLock(cfg.Path)
	case "mount":
		err = mountAndWait(cfg.Path)
	case "check":
		err = checkDatabase(cfg.Path, cfg.JournalMode)
	case "mmap":
		err = writeThroughMapping(cfg.Path)
	case "inprocess":
		err = sqliteInProcess(cfg.Path)
	default:
		err = fmt.Errorf("unknown job %q", cfg.Job)
	}
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("done")
	time.Sleep(time.Minute)
	return 0
}

// openSQLite opens a database with the given journal mode ("" for WAL)
// and synchronous setting.
func openSQLite(path, journalMode, synchronous string) (*sql.DB, error) {
	if journalMode == "" {
		journalMode = "WAL"
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode("+journalMode+")&_pragma=synchronous("+synchronous+")")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

func commitRows(cfg workerConfig) error {
	db, err := openSQLite(cfg.Path, cfg.JournalMode, cfg.Phases[0].Synchronous)
	if err != nil {
		return err
	}
	if _, err := db.Exec("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT)"); err != nil {
		return fmt.Errorf("create table: %w", err)
	}
	id := cfg.First
	for _, p := range cfg.Phases {
		if _, err := db.Exec("PRAGMA synchronous=" + p.Synchronous); err != nil {
			return err
		}
		for i := 0; i < p.Rows; i++ {
			if _, err := db.Exec("INSERT INTO t (id, v) VALUES (?, ?)", id, strings.Repeat("x", 100)); err != nil {
				return fmt.Errorf("insert %d: %w", id, err)
			}
			fmt.Println("committed", id)
			id++
		}
	}
	return nil // the database stays open: the worker dies holding it
}

func tryLock(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart, Start: 0, Len: 1}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk); err != nil {
		fmt.Println("lock:", err)
	} else {
		fmt.Println("lock: acquired")
	}
	return nil
}

// checked is what a "check" worker reports.
type checked struct {
	Integrity string `json:"integrity"`
	Rows      int    `json:"rows"`
	MaxID     int    `json:"max_id"`
}

// checkDatabase prints the integrity check and row count of a database
// (0 rows when the table, or the database, is gone) as a JSON line.
func checkDatabase(path, journalMode string) error {
	db, err := openSQLite(path, journalMode, "FULL")
	if err != nil {
		return err
	}
	defer db.Close()
	var c checked
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&c.Integrity); err != nil {
		return fmt.Errorf("integrity_check: %w", err)
	}
	var tables int
	if err := db.QueryRow("SELECT count(*) FROM sqlite_master WHERE name='t'").Scan(&tables); err != nil {
		return err
	}
	c.MaxID = -1
	if tables > 0 {
		if err := db.QueryRow("SELECT count(*), coalesce(max(id), -1) FROM t").Scan(&c.Rows, &c.MaxID); err != nil {
			return err
		}
	}
	out, err := json.Marshal(c)
	if err != nil {
		return err
	}
	fmt.Println("checked", string(out))
	return nil
}

// writeThroughMapping writes through a shared mapping of the file's first
// page, then fsyncs the file.
func writeThroughMapping(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("shared mmap: %w", err)
	}
	copy(mem, "through the mapping")
	if err := f.Sync(); err != nil { // writes the mapping's dirty pages back first
		return err
	}
	return syscall.Munmap(mem)
}

// worker is a running worker process.
type worker struct {
	cmd   *exec.Cmd
	out   *bufio.Scanner
	lines []string
}

// startWorker runs a worker until it printed "done" (or failed) and
// returns it, still running; the test's cleanup kills it.
func startWorker(t *testing.T, cfg workerConfig) *worker {
	t.Helper()
	w := launchWorker(t, cfg)
	w.waitDone(t)
	return w
}

// launchWorker starts a worker; the test's cleanup kills it.
func launchWorker(t *testing.T, cfg workerConfig) *worker {
	t.Helper()
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), workerEnv+"="+string(raw))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &worker{cmd: cmd, out: bufio.NewScanner(out)}
	t.Cleanup(w.kill)
	return w
}

// waitDone reads the worker's output until it printed "done", and fails
// the test if it failed or ended first.
func (w *worker) waitDone(t *testing.T) {
	t.Helper()
	for sc := w.out; sc.Scan(); {
		line := sc.Text()
		w.lines = append(w.lines, line)
		if line == "done" {
			return
		}
		if strings.HasPrefix(line, "error:") {
			w.kill()
			t.Fatalf("worker: %s", line)
		}
	}
	w.kill()
	t.Fatalf("worker ended before it was done: %v", w.lines)
}

// kill SIGKILLs the worker and reaps it.
func (w *worker) kill() {
	if w.cmd.ProcessState != nil {
		return
	}
	w.cmd.Process.Kill()
	w.cmd.Wait()
}

// mountAndWait mounts a lossy file system and leaves it mounted: the
// worker is killed with it.
func mountAndWait(dir string) error {
	_, err := Mount(context.Background(), filepath.Join(dir, "mnt"), filepath.Join(dir, "backing"), Options{})
	return err
}

// sqliteInProcess mounts a lossy file system and, in this same process,
// commits rows to a WAL database in it with locking_mode=EXCLUSIVE (no
// -shm mapping), cuts, and prints what a new connection finds.
func sqliteInProcess(dir string) error {
	f, err := Mount(context.Background(), filepath.Join(dir, "mnt"), filepath.Join(dir, "backing"), Options{})
	if err != nil {
		return err
	}
	defer f.Close()
	dsn := "file:" + filepath.Join(dir, "mnt", "db.sqlite") + "?_pragma=locking_mode(EXCLUSIVE)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return err
	}
	if _, err := db.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY)"); err != nil {
		return err
	}
	for i := range 20 {
		if _, err := db.Exec("INSERT INTO t (id) VALUES (?)", i); err != nil {
			return err
		}
	}
	if err := db.Close(); err != nil {
		return err
	}
	if _, err := f.Cut(context.Background()); err != nil {
		return err
	}
	if db, err = sql.Open("sqlite", dsn); err != nil {
		return err
	}
	defer db.Close()
	var c checked
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&c.Integrity); err != nil {
		return err
	}
	if err := db.QueryRow("SELECT count(*), max(id) FROM t").Scan(&c.Rows, &c.MaxID); err != nil {
		return err
	}
	out, err := json.Marshal(c)
	if err != nil {
		return err
	}
	fmt.Println("checked", string(out))
	return nil
}
