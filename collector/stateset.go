package collector

// stateSet emits a kube-state-metrics state set: one series per known state,
// 1 for current and 0 for the others. The state is the last label of desc,
// after labelValues. A current state outside known (the API grew a state the
// spec does not document) is sent as one more series with value 1, so that
// the set still sums to 1 and the new value is visible rather than lost.
func stateSet(out *Sink, desc *Desc, known []string, current string, labelValues ...string) {
	// A private copy with room for the state label: the caller's slice must
	// not be written to. The array keeps it off the heap on the rendering
	// path for the usual few labels.
	var buf [8]string
	lv := append(append(buf[:0], labelValues...), "")
	last := len(labelValues)
	found := false
	for _, state := range known {
		lv[last] = state
		v := 0.0
		if state == current {
			v, found = 1, true
		}
		out.gauge(desc, v, lv...)
	}
	if !found {
		lv[last] = current
		out.gauge(desc, 1, lv...)
	}
}
