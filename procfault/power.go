package procfault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/chaos/lossyfs"
)

// PowerOptions configure PowerLoss.
type PowerOptions struct {
	// URL is a sqlite:, libsql: or runs+sqlite: file URL, or a mutant: or
	// runs+mutant: with ?path=FILE.
	// Its synchronous= (NORMAL when it names none) is the promise judged.
	// The run puts the database under a lossy mount of its own, with the
	// URL's file name: the URL's own file is never touched.
	URL  string
	Seed uint64
	// Cycles is the number of kill-and-cut cycles; 0 means
	// DefaultPowerCycles.
	Cycles int
	// Command starts the workers; see SelfCommand.
	Command Command
	// Dir is where the run makes its mount and backing folders (removed at
	// the end); "" means the system's temporary folder.
	Dir string
	// Torn lets part of the unsynced data reach the disk at each cut, at
	// page granularity (drawn from Seed).
	Torn bool
	// Ops, when set, counts acknowledged commits as they come.
	Ops *atomic.Int64
	// Fault, when set, is told the fault being injected ("" when none).
	Fault func(string)
	// Disks, when set, is where a failed run keeps the disk images of its
	// last two cuts (Disks/cut-N/), the evidence a broken recovery is read
	// from.
	Disks string
}

// DefaultPowerCycles is how many cuts a run makes unless told otherwise.
const DefaultPowerCycles = 12

// powerCloseTimeout bounds unmounting the lossy file system at the end.
const powerCloseTimeout = 30 * time.Second

// PowerResult is what a power-loss run found.
type PowerResult struct {
	*CrashResult
	// Synchronous is the setting judged; Promise what it promises.
	Synchronous, Promise string
	// Unit names what was acknowledged: "commits" (an execution store) or
	// "writes" (a run store's create_run, append_run_event and
	// append_checkpoint calls).
	Unit string
	// Cuts is one record per power cut, in order.
	Cuts []CutRecord
	// Lost counts the acknowledged commits the cuts lost, in all;
	// Unexplained the recoveries (under OFF only) that were damaged or no
	// state the commits leave; CameBack the lost commits a later cut
	// brought back.
	Lost, Unexplained, CameBack int
	// Syncs counts the sync calls the store made, by kind, and per file
	// (its name relative to the database's folder).
	Syncs     map[lossyfs.SyncKind]int64
	FileSyncs map[string]lossyfs.PathCounters
}

// CutRecord is one power cut and what the recovery after it found.
type CutRecord struct {
	lossyfs.CutReport
	// Lost is how many acknowledged commits the recovery did not hold.
	Lost int `json:"lost"`
	// CameBack is how many acknowledged commits that cut LostAt had lost
	// the recovery held again, in place of those since the cut before
	// (allowed under NORMAL, reported: see branches.go).
	CameBack int `json:"came_back,omitempty"`
	LostAt   int `json:"lost_at,omitempty"`
	// Unexplained, under OFF, is what was wrong with the recovered store.
	Unexplained string `json:"unexplained,omitempty"`
}

// powerCut is the part of a crash run that cuts the power after each kill.
type powerCut struct {
	fs   *lossyfs.FS
	rule lossRule
	db   string // the database file, in the mount
	res  *PowerResult
	// backing is the lossy mount's backing folder: after a cut, the disk.
	// images holds copies of it after the last two cuts (images/cut-N).
	backing, images string
	// wipe says the last recovery was unexplained: the file is removed and
	// the next worker starts on empty tables.
	wipe bool
}

// PowerLoss runs opt.Cycles cycles on one database file in a lossy file
// system (package chaos/lossyfs): a worker process recovers the file,
// commits back to back and is SIGKILLed at a seeded moment, often mid-
// commit, and then the power is cut: every write the store did not fsync
// is lost. The next worker's recovered tables are checked against what the
// URL's synchronous setting promises (lossRule); a last worker only
// recovers. The error is for a run that could not be made (ErrNotRun,
// e.g. no FUSE here) or was interrupted; a broken guarantee is Err.
func PowerLoss(ctx context.Context, opt PowerOptions) (res *PowerResult, err error) {
	t, err := target("power-loss", opt.URL, PowerNeeds()...)
	if err != nil {
		return nil, err
	}
	if t.File == "" {
		return nil, notRun("power-loss needs a database file (sqlite:PATH, libsql:PATH, runs+sqlite:PATH, mutant:NAME?path=PATH)")
	}
	sync := t.Synchronous()
	rule, err := ruleFor(sync)
	if err != nil {
		return nil, notRun("%v", err)
	}
	if sync == "" {
		sync = "NORMAL"
	}
	if err := lossyfs.Available(); err != nil {
		return nil, notRun("%v", err)
	}
	cycles := opt.Cycles
	if cycles == 0 {
		cycles = DefaultPowerCycles
	}
	if cycles < 1 || cycles > MaxCycles {
		return nil, notRun("cycles must be 1..%d, got %d", MaxCycles, cycles)
	}
	dir, err := os.MkdirTemp(opt.Dir, "power-loss-*")
	if err != nil {
		return nil, notRun("a folder for the mount: %v", err)
	}
	defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	mount, backing := filepath.Join(dir, "mnt"), filepath.Join(dir, "disk")
	for _, d := range []string{mount, backing} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, notRun("%v", err)
		}
	}
	// Closing waits for the server's last requests, whose syncs of the
	// backing folder take seconds on a machine busy with I/O.
	fs, err := lossyfs.Mount(ctx, mount, backing, lossyfs.Options{Torn: opt.Torn, Seed: opt.Seed, CloseTimeout: powerCloseTimeout})
	if err != nil {
		return nil, notRun("%v", err)
	}
	// Workers are killed before the mount closes (each cycle reaps its
	// own), so Close unmounts without waiting on an open file.
	defer func() {
		cerr := fs.Close()
		if cerr == nil {
			return
		}
		// Close unmounts first, then waits for the server's goroutines.
		// Unmounted but with a request handler still running (a sync of
		// the backing disk on a machine thrashing its I/O), nothing is
		// left mounted: the verdict stands, with a note.
		if mounted, merr := lossyfs.Mounted(mount); merr == nil && !mounted && res != nil {
			res.Notes = append(res.Notes, "the lossy file system is unmounted, but its server had not stopped: "+cerr.Error())
			return
		}
		err = errors.Join(err, cerr, lossyfs.ForceUnmount(mount))
	}()
	db := filepath.Join(mount, filepath.Base(t.File))
	url := strings.Replace(opt.URL, t.File, db, 1)

	res = &PowerResult{CrashResult: &CrashResult{Hooks: t.Has(backends.CommitHooks)}, Synchronous: strings.ToUpper(sync), Promise: rule.String()}
	power := &powerCut{fs: fs, rule: rule, db: db, res: res, backing: backing}
	if opt.Disks != "" {
		power.images = filepath.Join(dir, "images")
		defer func() { err = errors.Join(err, power.keepImages(opt.Disks)) }()
	}
	res.Unit = "commits"
	if t.Has(backends.RunStore) {
		res.Unit = "writes"
		r := &runsPower{opt: opt, url: url, cycles: cycles, res: res, power: power}
		defer r.fault("")
		if err := r.run(ctx); err != nil {
			return res, err
		}
		res.syncs(fs.Stats(), mount)
		return res, nil
	}
	r := &crashRun{
		opt:    CrashOptions{URL: url, Seed: opt.Seed, Command: opt.Command, Ops: opt.Ops, Fault: opt.Fault},
		cycles: cycles, res: res.CrashResult, led: newLedger(), lat: initialLatency(),
		power: power,
	}
	defer r.fault("")
	for c := 0; c <= cycles && r.res.Err == nil; c++ {
		if err := r.cycle(ctx, c, c == cycles); err != nil {
			return res, interrupted(ctx, err)
		}
	}
	r.res.Notes = append(r.res.Notes, r.led.notes...)
	r.res.Acked = r.led.total
	res.syncs(fs.Stats(), mount)
	return res, nil
}

// cut cuts the power after cycle c's kill.
func (p *powerCut) cut(ctx context.Context) error {
	rep, err := p.fs.Cut(ctx)
	if err != nil {
		return notRun("power cut: %v", err)
	}
	p.res.Cuts = append(p.res.Cuts, CutRecord{CutReport: rep})
	return p.image(rep.Cut)
}

// image copies the disk as cut n left it to images/cut-n and drops the
// image of cut n-2: a broken recovery is read against the one before.
func (p *powerCut) image(n int) error {
	if p.images == "" {
		return nil
	}
	if err := os.RemoveAll(filepath.Join(p.images, fmt.Sprintf("cut-%d", n-2))); err != nil {
		return notRun("drop an old disk image: %v", err)
	}
	if err := os.CopyFS(filepath.Join(p.images, fmt.Sprintf("cut-%d", n)), os.DirFS(p.backing)); err != nil {
		return notRun("copy the disk after cut %d: %v", n, err)
	}
	return nil
}

// keepImages moves the disk images to dst when the run failed.
func (p *powerCut) keepImages(dst string) error {
	if p.res.Err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("keep the disk images: %w", err)
	}
	if err := os.Rename(p.images, dst); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("keep the disk images: %w", err)
	}
	return nil
}

// recovered records what the recovery after the last cut found: the
// verdict of verifyCut, or a worker that could not recover the file.
func (p *powerCut) recovered(found afterCut) {
	p.res.Lost += found.Lost
	p.res.CameBack += found.CameBack
	if found.Unexplained != "" {
		p.res.Unexplained++
		p.wipe = true
	}
	if n := len(p.res.Cuts); n > 0 {
		c := &p.res.Cuts[n-1]
		c.Lost, c.Unexplained, c.CameBack, c.LostAt = found.Lost, found.Unexplained, found.CameBack, found.LostAt
	}
}

// wipeFile removes the database and its WAL and index through the mount,
// and makes the removal durable, for a fresh start after an unexplained
// recovery.
func (p *powerCut) wipeFile() error {
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		if err := os.Remove(p.db + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return notRun("remove the damaged database: %v", err)
		}
	}
	d, err := os.Open(filepath.Dir(p.db))
	if err != nil {
		return notRun("%v", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return notRun("sync the database's folder: %v", err)
	}
	p.wipe = false
	return nil
}

// syncs keeps the sync counts of the files under mount.
func (r *PowerResult) syncs(st lossyfs.Stats, mount string) {
	r.Syncs = st.Syncs
	r.FileSyncs = map[string]lossyfs.PathCounters{}
	for path, c := range st.Paths {
		r.FileSyncs[strings.TrimPrefix(strings.TrimPrefix(path, mount), "/")] = c
	}
}
