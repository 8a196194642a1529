package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clouddb/clouddb_exporter/admin"
	"github.com/clouddb/clouddb_exporter/changes"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/dataplane"
	"github.com/clouddb/clouddb_exporter/exposition"
	"github.com/clouddb/clouddb_exporter/internal/safefile"
	"github.com/clouddb/clouddb_exporter/pricing"
	"github.com/clouddb/clouddb_exporter/projects"
	"github.com/clouddb/clouddb_exporter/rightsizing"
	"github.com/clouddb/clouddb_exporter/shard"
)

// pipeline is what stands between the projects and the exposition: the
// change timeline, the rightsizing and the cost estimate that each snapshot
// passes, and the state file.
type pipeline struct {
	timeline  *changes.Timeline
	publish   projects.Publisher
	positions *dataplane.LogPositions
	observer  func(projectID string) *dataplane.UsageObserver
	// load is the projects' source, which also re-reads the price file.
	load  func() ([]config.Project, error)
	close func()
}

// startPipeline builds the pipeline; its close saves the state file, then
// flushes the timeline: call it once the pollers and readers have stopped.
func startPipeline(ctx context.Context, f *flags, c checked, logger *slog.Logger, sh shard.Shard, reg prometheus.Registerer,
	expo *exposition.Handler, load func() ([]config.Project, error)) (*pipeline, error) {
	costs := pricing.NewEstimator(expo, reg, logger)
	sizing := rightsizing.NewTracker(c.rightsizing, time.Now)
	health := safefile.NewHealth(reg) // one for the state files: registered once
	timeline, publish, closeChanges, err := startTimeline(ctx, f, logger, sh, reg, health, rightsizing.NewPublisher(costs, sizing, costs.Table))
	if err != nil {
		return nil, err
	}
	positions, err := openStateFile(ctx, f, sizing, logger, health)
	if err != nil {
		closeChanges()
		return nil, err
	}
	return &pipeline{
		timeline: timeline, publish: publish, positions: positions,
		observer: usageObserver(sizing, c.rightsizing, f.rightsizing.enabled),
		load:     pricedLoad(load, f, costs),
		// The last snapshots are compared, then the sink is flushed and the
		// state saved; the log readers' last positions are in by then.
		close: func() {
			closeStateFile(positions, sizing)
			closeChanges()
		},
	}, nil
}

// writesOf: a nil *Timeline must not become a non-nil interface.
func writesOf(t *changes.Timeline) admin.WriteObserver {
	if t == nil {
		return nil
	}
	return t
}

// startTimeline opens the change timeline (nil with --no-changes) and returns
// the publisher the projects hand their snapshots to.
func startTimeline(ctx context.Context, f *flags, logger *slog.Logger, sh shard.Shard, reg prometheus.Registerer, health *safefile.Health,
	next projects.Publisher) (*changes.Timeline, projects.Publisher, func(), error) {
	// The embedded simulator is a new API at each start: its reset is no change.
	f.changes.FreshAPI = f.simulate
	timeline, err := f.changes.Open(logger, shardName(sh), health)
	if err != nil || timeline == nil {
		return nil, next, func() {}, err
	}
	reg.MustRegister(timeline)
	go timeline.Run(ctx)
	return timeline, timeline.Wrap(next), func() {
		// The sink gets a few seconds to deliver what is queued.
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		timeline.Close(cctx)
	}, nil
}
