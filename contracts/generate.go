package contracts

//go:generate go run ./internal/gentools -o tools.json
