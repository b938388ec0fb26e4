package config

//go:generate go run ./internal/genconfigdoc -schema schema.json -o ../../docs/configuration.md
