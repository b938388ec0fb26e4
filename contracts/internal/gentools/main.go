// Command gentools writes contracts/tools.json, the generated tool list, from
// the contract declarations. It runs through go generate in the contracts
// package.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/praxa/praxa/contracts"
)

func main() {
	out := flag.String("o", "tools.json", "file to write")
	flag.Parse()
	b, err := contracts.MarshalToolList(contracts.Tools())
	if err == nil {
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gentools:", err)
		os.Exit(1)
	}
}
