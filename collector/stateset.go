package collector

import "github.com/prometheus/client_golang/prometheus"

// stateSet sends a kube-state-metrics state set: one series per known state,
// 1 for current and 0 for the others. The state is the last label of desc,
// after labelValues. A current state outside known (the API grew a state the
// spec does not document) is sent as one more series with value 1, so that
// the set still sums to 1 and the new value is visible rather than lost.
func stateSet(ch chan<- prometheus.Metric, desc *prometheus.Desc, known []string, current string, labelValues ...string) {
	// A private copy with room for the state label: the caller's slice must
	// not be written to.
	lv := make([]string, len(labelValues)+1)
	copy(lv, labelValues)
	last := len(labelValues)
	found := false
	for _, state := range known {
		lv[last] = state
		v := 0.0
		if state == current {
			v, found = 1, true
		}
		gauge(ch, desc, v, lv...)
	}
	if !found {
		lv[last] = current
		gauge(ch, desc, 1, lv...)
	}
}
