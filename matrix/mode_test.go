package matrix

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseMode(t *testing.T) {
	tests := []struct {
		in      string
		want    Mode
		wantErr bool
	}{
		{"smooth", Smooth, false},
		{"nonsmooth", NonSmooth, false},
		{"", 0, true},
		{"Smooth", 0, true},
		{"non-smooth", 0, true},
	}
	for _, tc := range tests {
		got, err := ParseMode(tc.in)
		if (err != nil) != tc.wantErr || (err == nil && got != tc.want) {
			t.Errorf("ParseMode(%q) = %v, %v; want %v, err %v", tc.in, got, err, tc.want, tc.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("%q", tc.in)) {
			t.Errorf("ParseMode(%q) error %q does not name the value", tc.in, err)
		}
		if err == nil && got.String() != tc.in {
			t.Errorf("%v.String() = %q, want %q", got, got.String(), tc.in)
		}
	}
}
