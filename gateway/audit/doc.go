// Package audit is the gateway's audit trail outside a mutation's own
// transaction: the Auditor that writes the events of reads and refusals
// in batches (and commits the light path's one event per call), the sinks
// that receive every committed event (a file or stderr, an HTTP endpoint;
// Hooks for a capability's audit block, WithSink and WithHooks wrap a
// store so that a sink sees an event only once its transaction committed),
// the export and the retention sweep of the stored trail, and its read
// back for the console (Auditor.Events).
//
// Every event leaves the store redacted, the way aura_get_trace shows it
// (op.TraceEventOf, package redact). It imports neither the service
// (package gateway) nor a feature package: the service and the runtimes
// build it and hand it the store.
package audit
