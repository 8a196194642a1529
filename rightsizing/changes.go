package rightsizing

// A project logs the services whose windows change, so that a publish
// sizes again only those (Publisher.recommend): a usage read changes a
// sixtieth of them between two publishes.

// changeMark is how far a reader of a project's change log has read.
type changeMark struct {
	p    *project
	seen uint64
}

// windowChanges is what changedSince tells of a project's windows.
type windowChanges struct {
	mark    changeMark
	windows int
	// ids are the services whose windows changed since the mark given, or
	// any may have (all): the project's windows were replaced (a state read
	// back, the project removed) or more changed than the log keeps.
	ids []string
	all bool
}

// logChange records that the window of service id changed, was added or
// was dropped; t.mu is held. The log keeps the last eighth of the windows'
// number of changes (64 at least): a reader further behind sizes all.
func (p *project) logChange(id string) {
	p.changes = append(p.changes, id)
	p.changed++
	if keep := len(p.windows)/8 + 64; len(p.changes) > 2*keep {
		p.changes = append([]string(nil), p.changes[len(p.changes)-keep:]...)
	}
}

// changedSince tells what changed in projectID's windows since mark (the
// zero mark, or one it returned); no windows: the zero mark.
func (t *Tracker) changedSince(projectID string, mark changeMark) windowChanges {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.projects[projectID]
	if p == nil {
		return windowChanges{all: true}
	}
	c := windowChanges{mark: changeMark{p, p.changed}, windows: len(p.windows)}
	first := p.changed - uint64(len(p.changes))
	if mark.p != p || mark.seen < first {
		c.all = true
		return c
	}
	// Never modified once logged: the log grows past it, or is copied.
	c.ids = p.changes[mark.seen-first:]
	return c
}
