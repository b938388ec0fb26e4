package openapi_test

import (
	"fmt"
	"net/http"

	"github.com/praxa/praxa/openapi"
)

func ExampleBuild() {
	doc, err := openapi.Build()
	if err != nil {
		panic(err)
	}
	op := doc.Paths.Value("/v8/missions/{runId}/signals").GetOperation(http.MethodPost)
	fmt.Println(doc.OpenAPI, doc.Info.Title)
	fmt.Println(op.OperationID, op.Extensions[openapi.ExtensionTool], op.Extensions[openapi.ExtensionIdempotency])
	for _, p := range op.Parameters {
		fmt.Println(p.Value.In, p.Value.Name, p.Value.Required)
	}
	// Output:
	// 3.1.0 Praxa gateway API
	// signalMission aura_signal_mission required
	// path runId true
	// header Idempotency-Key true
}
