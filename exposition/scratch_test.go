package exposition

import (
	"testing"
	"unsafe"
)

// TestRendererKeepsSteadyScratch: once the field's publishes have gone
// round (past two windows of scratchWindow), each scrape renders its changed chunks into the
// scratch buffers of the last, none let go and grown again.
func TestRendererKeepsSteadyScratch(t *testing.T) {
	if testing.Short() {
		t.Skip("renders 250 ticks of the field")
	}
	t.Parallel()
	e, tick := fieldTicks(2000)
	// Past the first rendering's spike: two windows of the scratch's use.
	for range 2*scratchWindow + fieldUsageTicks {
		tick()
	}
	kept := e.scratchArrays()
	for name, p := range kept {
		if p == nil {
			t.Fatalf("no %s scratch kept", name)
		}
	}
	for i := range fieldUsageTicks {
		tick()
		now := e.scratchArrays()
		for name, p := range kept {
			if now[name] != p {
				t.Fatalf("tick %d: scratch %s let go or grown again", i, name)
			}
		}
	}
}

// scratchArrays returns the arrays of the renderer's line scratch by name.
func (e *Handler) scratchArrays() map[string]unsafe.Pointer {
	e.renderMu.Lock()
	defer e.renderMu.Unlock()
	out := map[string]unsafe.Pointer{}
	w := e.render.w
	out["lines"] = unsafe.Pointer(unsafe.SliceData(w.buf))
	out["order"] = unsafe.Pointer(unsafe.SliceData(w.order))
	out["out"] = unsafe.Pointer(unsafe.SliceData(e.render.out.Bytes()))
	return out
}
