package contracts

// ServerName is the implementation name the gateway announces to MCP clients.
const ServerName = "praxa"

// ServerVersion is the version of this implementation of the contract.
const ServerVersion = "0.1.0"

// APIVersion is the REST API version; every REST path starts with "/" + APIVersion.
const APIVersion = "v8"
