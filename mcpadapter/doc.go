// Package mcpadapter serves the contract's tools over the Model Context
// Protocol with the official go-sdk: the twelve aura_* tools and the praxec
// pair, registered from package contracts, over stdio and streamable HTTP.
// Every call goes to the same service layer as REST, in process or through
// gateway/restclient; the adapter only translates.
//
// This package must not import conformance.
package mcpadapter
