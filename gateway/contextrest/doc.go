// Package contextrest holds the REST tests of the governed skills, the
// purpose-filtered context (memory and goals) and the model capability
// certificates: aura_get_skill, aura_query_memory, aura_list_goals and
// aura_list_world_certificates, each with its scope, tenancy, validation,
// filters and refusals, over a real stack (an OIDC issuer over HTTP, a
// SQLite file, the service with the example skills and certificate issuer,
// the bearer verifier and the /v8 router). The package has no non-test
// code.
package contextrest
