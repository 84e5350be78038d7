package adapter

import (
	"context"

	"github.com/storecheck/storecheck/backends/adapter/wire"
	"github.com/storecheck/storecheck/model"
)

// The optional interfaces a store may implement are found by type
// assertion, so a Store is handed out inside a type that has exactly the
// methods its adapter supports.

type dumpCap struct{ s *Store }

// Dump implements model.Dumper with the adapter's dump.
func (c dumpCap) Dump(ctx context.Context) (*model.Dump, error) { return c.s.dump(ctx) }

type resetCap struct{ s *Store }

// Reset implements model.Resetter with the adapter's reset.
func (c resetCap) Reset(ctx context.Context) error { return c.s.reset(ctx) }

type traceCap struct{ s *Store }

// SetTraceMax implements model.TraceMaxSetter: every process is told the
// new cap before its next operation.
func (c traceCap) SetTraceMax(n int) { c.s.traceMax.Store(int64(n)) }

// withCapabilities wraps s in the type that matches its adapter's optional
// operations.
func (s *Store) withCapabilities() model.Store {
	d, r, t := dumpCap{s}, resetCap{s}, traceCap{s}
	switch [3]bool{s.hello.Has(wire.OpDump), s.hello.Has(wire.OpReset), s.hello.Has(wire.OpSetTraceMax)} {
	case [3]bool{true, true, true}:
		return struct {
			*Store
			dumpCap
			resetCap
			traceCap
		}{s, d, r, t}
	case [3]bool{true, true, false}:
		return struct {
			*Store
			dumpCap
			resetCap
		}{s, d, r}
	case [3]bool{true, false, true}:
		return struct {
			*Store
			dumpCap
			traceCap
		}{s, d, t}
	case [3]bool{true, false, false}:
		return struct {
			*Store
			dumpCap
		}{s, d}
	case [3]bool{false, true, true}:
		return struct {
			*Store
			resetCap
			traceCap
		}{s, r, t}
	case [3]bool{false, true, false}:
		return struct {
			*Store
			resetCap
		}{s, r}
	case [3]bool{false, false, true}:
		return struct {
			*Store
			traceCap
		}{s, t}
	}
	return s
}

// Unwrap returns the *Store inside a store Open returned.
func Unwrap(st model.Store) (*Store, bool) {
	if u, ok := st.(interface{ adapterStore() *Store }); ok {
		return u.adapterStore(), true
	}
	return nil, false
}

func (s *Store) adapterStore() *Store { return s }

var (
	_ model.Store = (*Store)(nil)
	_ Faults      = (*Store)(nil)
)
