package gatewaytest

import (
	"strconv"
	"strings"
)

// MetricValue reads a Prometheus text exposition (what /metrics serves):
// the sum of the samples of the series name whose labels include all of
// labels (nil: any), or -1 when there is none or a value does not parse.
func MetricValue(text, name string, labels map[string]string) float64 {
	sum := -1.0
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		ok := true
		for k, v := range labels {
			if !strings.Contains(line, k+`="`+v+`"`) {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return -1
		}
		sum = max(sum, 0) + v
	}
	return sum
}
