package jsonw_test

import (
	"math"
	"testing"

	"github.com/ohmypi/retryfsm/internal/jsonw"
)

// TestAppendNumber: the bytes of JavaScript's JSON.stringify for each
// number (the expected strings were printed by Node.js).
func TestAppendNumber(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {math.Copysign(0, -1), "0"}, {1, "1"}, {-1, "-1"}, {0.1, "0.1"}, {0.999, "0.999"}, {2000, "2000"},
		{1e21, "1e+21"}, {1e-7, "1e-7"}, {1.5e-7, "1.5e-7"}, {-1e-7, "-1e-7"}, {1e-10, "1e-10"},
		{123456789012345680000, "123456789012345680000"}, {0.000001, "0.000001"}, {1e300, "1e+300"},
		{9223372036854.775807, "9223372036854.775"}, {5e-324, "5e-324"}, {math.MaxFloat64, "1.7976931348623157e+308"},
		{1.0 / 3, "0.3333333333333333"}, {-2.5e-300, "-2.5e-300"}, {999999999999999900000, "999999999999999900000"},
		{1e20, "100000000000000000000"}, {0.0000015, "0.0000015"}, {86399999.999999, "86399999.999999"},
		{math.NaN(), "null"}, {math.Inf(1), "null"}, {math.Inf(-1), "null"},
	} {
		if got := string(jsonw.AppendNumber([]byte("x"), tc.v)); got != "x"+tc.want {
			t.Errorf("AppendNumber(%v) = %q, want %q", tc.v, got[1:], tc.want)
		}
	}
}
