package leases

import (
	"fmt"
	"io"

	"github.com/anishathalye/porcupine"
)

// Visualize writes porcupine's HTML visualization of run's history, which
// the report found illegal: the longest partial linearizations and where
// each got stuck.
func Visualize(w io.Writer, r *Report, run string) error {
	info, ok := r.Info[run]
	if !ok {
		return fmt.Errorf("visualize: run %q was not found illegal", run)
	}
	if err := porcupine.Visualize(newModel(), info, w); err != nil {
		return fmt.Errorf("visualize run %q: %w", run, err)
	}
	return nil
}
