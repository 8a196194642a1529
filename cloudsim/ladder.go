package cloudsim

// demoLadder is the sizes the demo's resizes move along: the rightsizing
// ladder's default, which the example price file (deploy/pricing.example.yml)
// prices in every demo region, so that the demo's cost estimate leaves
// nothing out however long it runs. The API takes any size.
var demoLadder = [...]struct{ cpuMillis, memoryGBs int64 }{
	{500, 2}, {1000, 4}, {2000, 8}, {4000, 16}, {8000, 32}, {16000, 64}, {32000, 128},
}

// ladderStep is the size steps rungs up (down when negative) from the
// smallest rung with at least cpuMillis, within the ladder; steps 0 puts a
// size off the ladder on it.
func ladderStep(cpuMillis int64, steps int) (cpu, mem int64) {
	i := len(demoLadder) - 1
	for j, r := range demoLadder {
		if r.cpuMillis >= cpuMillis {
			i = j
			break
		}
	}
	i = min(max(i+steps, 0), len(demoLadder)-1)
	return demoLadder[i].cpuMillis, demoLadder[i].memoryGBs
}
