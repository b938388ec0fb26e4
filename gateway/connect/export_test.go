package connect

// PIDNamespaces reports whether children get PID namespaces here.
var PIDNamespaces = pidNamespaces
