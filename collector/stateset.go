package collector

// stateSet emits a state set labelled by desc's last label; an undocumented
// current state is one more series at 1, so the set still sums to 1.
func stateSet(out *Sink, desc *Desc, known []string, current string, labelValues ...string) {
	// A copy, on the stack: the caller's slice must not be written to.
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
