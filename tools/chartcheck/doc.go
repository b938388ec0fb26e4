// Package chartcheck holds the tests of Praxa's Helm chart
// (deploy/helm/praxa): every manifest the chart renders, with the default
// and the production values, decodes strictly into its Kubernetes type
// (k8s.io/api; the ServiceMonitor into the Prometheus Operator's), and the
// rendered objects say what the chart promises (the store, the probes, the
// security context of the image, the disruption budget, the network
// policy, the pods rolled when praxec.yaml changes).
//
// It is a module of its own so that the gateway's module never imports
// k8s.io; Helm v4 is built from another (tools/helm), whose dependencies
// are Helm's alone. CI runs it with go -C tools/chartcheck test ./...
package chartcheck
