package contracts

// Coverage evidence: aura_get_coverage reads it, and the operator endpoint
// POST /v8/coverage/runs (scope coverage:write) records it from a
// conformance run's report. Both shapes are declared here, beside the tool,
// so the gateway that serves them and the conformance suite that posts
// reports read one definition.

// CoverageStatement is the statement every coverage answer carries
// (seeds/003: coverage is not a measure of production readiness).
const CoverageStatement = "Coverage is not a measure of production readiness: it shows which conformance cases exercised each operation " +
	"and what they found the last time a run was recorded, nothing more."

// The operator endpoint that records a conformance run.
const (
	OperationRecordCoverageRun = "recordCoverageRun"
	CoverageRunsPath           = "/v8/coverage/runs"
)

// MaxCoverageResults bounds the case results of one recorded run.
const MaxCoverageResults = 2000

// The verdicts of a conformance case.
const (
	CoveragePass = "pass"
	CoverageFail = "fail"
	CoverageSkip = "skip"
)

func coverageVerdict() schema {
	return str(1, 8).with("enum", []string{CoveragePass, CoverageFail, CoverageSkip}).desc("The case's verdict: pass, fail or skip.")
}

func dateTime() schema {
	return str(1, 64).with("format", "date-time").desc("An RFC 3339 date-time.")
}

// coverageRunIn is the body of POST /v8/coverage/runs: a conformance run's
// report.
func coverageRunIn() schema {
	return object([]string{"suite", "startedAt", "finishedAt", "results"}, map[string]schema{
		"suite":        str(1, 64).desc("The suite that ran, e.g. praxa-conformance."),
		"suiteVersion": str(1, 64).desc("The suite's version."),
		"target":       str(1, 2048).desc("The base URL the suite checked."),
		"startedAt":    dateTime(),
		"finishedAt":   dateTime(),
		"results": array(object([]string{"id", "result"}, map[string]schema{
			"id":         identifier("The case's stable identifier."),
			"title":      str(0, 512).desc("What the case checks."),
			"group":      str(1, 64).with("pattern", "^[a-z][a-z0-9-]*$").desc("The case's group."),
			"proves":     str(0, 512).desc("The checklist item or seed section the case proves."),
			"operations": array(identifier("An operationId."), 32).with("uniqueItems", true).desc("The operations the case exercises."),
			"result":     coverageVerdict(),
			"reason":     str(0, maxSummaryLen).desc("Why the case failed or was skipped."),
			"at":         dateTime().desc("When the case ran."),
			"durationMs": integer(0, maxVersionValue).desc("How long the case ran, in milliseconds."),
		}), MaxCoverageResults).with("minItems", 1).desc("One entry per case that ran."),
	})
}

// coverageRunOut is the answer of POST /v8/coverage/runs.
func coverageRunOut() schema {
	return record([]string{"runId", "recordedAt", "passed", "failed", "skipped"}, map[string]schema{
		"runId":      outString().desc("The recorded run's identifier."),
		"recordedAt": outString().with("format", "date-time"),
		"passed":     outInteger(),
		"failed":     outInteger(),
		"skipped":    outInteger(),
	})
}

// coverageOut is the output of aura_get_coverage.
func coverageOut() schema {
	return record([]string{"statement", "operations"}, map[string]schema{
		"statement": outString().desc("Coverage is not a measure of production readiness."),
		"run": record([]string{"runId", "recordedAt"}, map[string]schema{
			"runId":        outString(),
			"recordedAt":   outString().with("format", "date-time"),
			"suite":        outString(),
			"suiteVersion": outString(),
			"startedAt":    outString().with("format", "date-time"),
			"finishedAt":   outString().with("format", "date-time"),
			"passed":       outInteger(),
			"failed":       outInteger(),
			"skipped":      outInteger(),
		}).desc("The last recorded run; absent when none was recorded."),
		"operations": outArray(record([]string{"operationId", "cases"}, map[string]schema{
			"operationId": outString(),
			"tool":        outString().desc("The MCP tool of the operation, when it has one."),
			"cases": outArray(record([]string{"id", "result", "at"}, map[string]schema{
				"id":     outString(),
				"title":  outString(),
				"group":  outString(),
				"proves": outString(),
				"result": coverageVerdict(),
				"reason": outString(),
				"at":     outString().with("format", "date-time").desc("When the case last ran in a recorded run."),
				"runId":  outString().desc("The recorded run the result comes from."),
			})).desc("The conformance cases that exercise the operation, with the result of their last recorded run."),
		})).desc("Every operation of the contract, then any other operation a recorded case names."),
	})
}

// ValidateCoverageRun checks a decoded report against the input schema of
// POST /v8/coverage/runs; a violation is an *Error with code INVALID_PARAMS.
func ValidateCoverageRun(report any) error {
	return ValidateEndpointInput(OperationRecordCoverageRun, report)
}

// ValidateCoverageRunOutput checks a decoded answer of POST /v8/coverage/runs.
func ValidateCoverageRunOutput(result any) error {
	return ValidateEndpointOutput(OperationRecordCoverageRun, result)
}
