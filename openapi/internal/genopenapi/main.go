// Command genopenapi writes openapi/openapi.json, the generated OpenAPI
// document of the /v8 REST API, from the contract declarations. It runs
// through go generate in the openapi package.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/praxa/praxa/openapi"
)

func main() {
	out := flag.String("o", "openapi.json", "file to write")
	flag.Parse()
	doc, err := openapi.Build()
	var b []byte
	if err == nil {
		b, err = openapi.MarshalJSON(doc)
	}
	if err == nil {
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genopenapi:", err)
		os.Exit(1)
	}
}
