package scenarios

import (
	"github.com/storecheck/storecheck/model"
	"github.com/storecheck/storecheck/reports"
)

// GuaranteeAdapterProtocol is broken by an exec: backend whose adapter
// broke its protocol during the run (docs/ADAPTER.md §6: it crashed, wrote
// a malformed line or a wrong id, or did not answer in time). The adapter
// is part of the store under test, so this is a FAIL of the backend, never
// a NOT RUN: a store that crashes under load must not pass a gate.
const GuaranteeAdapterProtocol = "adapter protocol"

// brokenStore is the error that broke s for good (model.Breakable), nil
// while s is usable or when it cannot say.
func brokenStore(s any) error {
	if b, ok := s.(model.Breakable); ok {
		return b.Broken()
	}
	return nil
}

// adapterBroken makes out a FAIL of the adapter protocol, with the store's
// first error as the reason and, when the history recorded up to the break
// already showed a violation, that too.
func adapterBroken(out *Result, err error) {
	reason := err.Error()
	if out.Verdict == reports.Fail && out.Reason != "" {
		reason += "; the history up to then: " + out.Reason
	}
	out.Verdict, out.Guarantee, out.Reason = reports.Fail, GuaranteeAdapterProtocol, flatReason(reason)
}

// brokeBeforeTraffic is the FAIL of a store that broke for good before the
// workload's traffic began (emptying it, checking it is empty), and
// whether it did.
func brokeBeforeTraffic(store any, srv []string) (Result, bool) {
	b := brokenStore(store)
	if b == nil {
		return Result{}, false
	}
	out := Result{Servers: srv}
	adapterBroken(&out, b)
	return out, true
}
