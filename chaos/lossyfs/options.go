package lossyfs

import "time"

// Options configure a mount. The zero value is usable.
type Options struct {
	// Torn makes Cut let part of the unsynced data reach the backing
	// directory (see the package documentation), drawn from Seed.
	Torn bool
	Seed uint64
	// SyncLogSize is how many sync calls Stats keeps (default 4096;
	// negative keeps none).
	SyncLogSize int
	// MaxJournal is how many entry changes wait for a directory fsync
	// before the oldest half is committed anyway (default 100000).
	MaxJournal int
	// CloseTimeout bounds Close (default 5s).
	CloseTimeout time.Duration
	// Debug logs every FUSE request (go-fuse's debug output).
	Debug bool
}

// Defaults.
const (
	defaultSyncLogSize  = 4096
	defaultMaxJournal   = 100000
	defaultCloseTimeout = 5 * time.Second
)

func (o Options) withDefaults() Options {
	if o.SyncLogSize == 0 {
		o.SyncLogSize = defaultSyncLogSize
	}
	if o.MaxJournal <= 0 {
		o.MaxJournal = defaultMaxJournal
	}
	if o.CloseTimeout <= 0 {
		o.CloseTimeout = defaultCloseTimeout
	}
	return o
}
