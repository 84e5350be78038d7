package lagsim

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/storecheck/storecheck/model"
)

// errReadOnly refuses a write sent to a replica: every write goes to the
// primary (replica.Store never sends one here).
var errReadOnly = fmt.Errorf("%s: %w: a replica takes no writes", Scheme, model.ErrNotApplied)

// readOnly is the write side of the mutant replicas (torn, short, the
// hunt's): every write refused with errReadOnly. Embedded, it leaves a
// replica to say only how it reads and syncs.
type readOnly struct{}

func (readOnly) Commit(context.Context, *model.Execution, model.Batch) error { return errReadOnly }
func (readOnly) Save(context.Context, *model.Execution) error                { return errReadOnly }
func (readOnly) AckOutbox(context.Context, int64) error                      { return errReadOnly }
func (readOnly) AckSpawn(context.Context, int64) error                       { return errReadOnly }
func (readOnly) DeleteTimer(context.Context, string, string, float64) error  { return errReadOnly }
func (readOnly) AppendTrace(context.Context, string, json.RawMessage) error  { return errReadOnly }
