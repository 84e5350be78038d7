package linearizability

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/anishathalye/porcupine"
)

// pkey names one porcupine partition: an execution's register or its trace
// ring.
type pkey struct {
	exec string
	part part
}

func (k pkey) String() string { return fmt.Sprintf("%s/%s", k.exec, k.part) }

// porcupineOps returns the operations porcupine checks, each once per
// partition it belongs to. Failed operations had no effect and are left out,
// as are indeterminate ones res settled as having none; so are the queue and
// timer kinds, which the global checks cover, and reads served by a replica,
// which may be stale and are checked by the replica rules (replica.go): a
// register partition then holds the commits and the primary's reads.
func porcupineOps(ops []Operation, res resolution) []porcupine.Operation {
	var out []porcupine.Operation
	eachChecked(ops, res, func(i int, p part) {
		out = append(out, porcupineOp(&ops[i], p, res))
	})
	return out
}

// eachChecked calls fn for each operation porcupine checks (porcupineOps),
// once per partition it belongs to, in history order.
func eachChecked(ops []Operation, res resolution, fn func(i int, p part)) {
	for i := range ops {
		op := &ops[i]
		if op.Output.Outcome == OutcomeFailed || res.drop[op] || res.anon[op] || op.replicaRead() {
			continue
		}
		switch op.Kind {
		case KindCommit, KindSave:
			fn(i, partRegister)
			if op.Input.Trace != "" && op.Output.Outcome != OutcomeConflict {
				fn(i, partTrace)
			}
		case KindLoad, KindLoadForEvent, KindIsProcessed:
			fn(i, partRegister)
		case KindReadTrace, KindAppendTrace:
			fn(i, partTrace)
		}
	}
}

// porcupineOp is op as porcupine sees it in partition p.
func porcupineOp(op *Operation, p part, res resolution) porcupine.Operation {
	return porcupineOpIn(new(input), op, p, res)
}

// porcupineOpIn is porcupineOp with its input in in.
func porcupineOpIn(in *input, op *Operation, p part, res resolution) porcupine.Operation {
	*in = input{op: op, part: p, maxAnon: res.maxAnon[op]}
	return porcupine.Operation{ClientId: op.Client, Input: in, Call: op.Call, Return: res.returnOf(op)}
}

// partitionIndex groups the operations porcupine checks by partition, as
// indexes into ops, in groupPartitions' order. Check makes each
// partition's porcupine operations only when it checks that partition
// (partitionOps): on every core at once, and held a partition at a time
// instead of a whole history's at once.
func partitionIndex(ops []Operation, res resolution) ([]pkey, [][]int) {
	slot := map[string]int{} // execution → its partitions' slots (2 per execution)
	var keys []pkey
	var groups [][]int
	eachChecked(ops, res, func(i int, p part) {
		exec := ops[i].Execution
		s, ok := slot[exec]
		if !ok {
			s = len(keys)
			slot[exec] = s
			keys = append(keys, pkey{exec, partRegister}, pkey{exec, partTrace})
			groups = append(groups, nil, nil)
		}
		if p == partTrace {
			s++
		}
		groups[s] = append(groups[s], i)
	})
	order := make([]int, 0, len(keys))
	for i := range keys {
		if len(groups[i]) > 0 {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(keys[a].exec, keys[b].exec), cmp.Compare(keys[a].part, keys[b].part))
	})
	sortedKeys := make([]pkey, len(order))
	sortedGroups := make([][]int, len(order))
	for i, j := range order {
		sortedKeys[i], sortedGroups[i] = keys[j], groups[j]
	}
	return sortedKeys, sortedGroups
}

// partitionOps is partition k's porcupine operations, from its indexes.
func partitionOps(ops []Operation, k pkey, idx []int, res resolution) []porcupine.Operation {
	out := make([]porcupine.Operation, len(idx))
	ins := make([]input, len(idx)) // one allocation for the partition's inputs, not one each
	for j, i := range idx {
		out[j] = porcupineOpIn(&ins[j], &ops[i], k.part, res)
	}
	return out
}

func keyOf(op porcupine.Operation) pkey {
	in := op.Input.(*input)
	return pkey{exec: in.op.Execution, part: in.part}
}

// groupPartitions splits ops by partition, in a fixed order (execution id,
// then register before trace).
func groupPartitions(ops []porcupine.Operation) ([]pkey, [][]porcupine.Operation) {
	index := map[pkey]int{}
	var keys []pkey
	var groups [][]porcupine.Operation
	for _, op := range ops {
		k := keyOf(op)
		i, ok := index[k]
		if !ok {
			i = len(keys)
			index[k] = i
			keys = append(keys, k)
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], op)
	}
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(keys[a].exec, keys[b].exec), cmp.Compare(keys[a].part, keys[b].part))
	})
	sortedKeys := make([]pkey, len(keys))
	sortedGroups := make([][]porcupine.Operation, len(keys))
	for i, j := range order {
		sortedKeys[i], sortedGroups[i] = keys[j], groups[j]
	}
	return sortedKeys, sortedGroups
}

// partitionPorcupine is the model's Partition function.
func partitionPorcupine(ops []porcupine.Operation) [][]porcupine.Operation {
	_, groups := groupPartitions(ops)
	return groups
}
