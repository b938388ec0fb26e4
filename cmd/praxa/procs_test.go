package main

import "testing"

func TestProcsFor(t *testing.T) {
	for _, tc := range []struct {
		name        string
		current     int
		operatorSet bool
		want        int
	}{
		{"one CPU: raised", 1, false, minProcs},
		{"two CPUs: kept", 2, false, 0},
		{"many CPUs: kept", 16, false, 0},
		{"GOMAXPROCS=1 set by the operator: kept", 1, true, 0},
		{"GOMAXPROCS=4 set by the operator: kept", 4, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := procsFor(tc.current, tc.operatorSet); got != tc.want {
				t.Errorf("procsFor(%d, %v) = %d, want %d", tc.current, tc.operatorSet, got, tc.want)
			}
		})
	}
}
