// Package collector defines the resource metrics: what each metric is
// called, what it means and which field of a fleet snapshot it is read
// from. It does not serve them; the exposition package renders them.
//
//   - Each resource has a file (services.go, replicasets.go, vpcs.go,
//     peerings.go, auth.go, health.go) with its descriptors (newDesc) and a
//     collect function that emits its samples through a Sink.
//   - stateDescs (fleet.go) lists the state's descriptors, and a data-plane
//     part registers its own (RegisterPart, from usage.go, logs.go or the
//     reader's file); Families returns them all sorted by name, the order
//     of the families in an exposition.
//   - Groups (groups.go) are the lists of a snapshot and the collect
//     function of each: the FleetCollector runs them on a whole snapshot,
//     the exposition on runs of resources (its chunks), recording the
//     samples in Samples and writing the lines itself.
//   - FleetCollector is a prometheus.Collector over the same collect
//     functions: the oracle the exposition is tested against.
//
// The flow is API -> snapshot (fleet) -> collector -> exposition; the
// exposition imports this package, never the reverse.
package collector
