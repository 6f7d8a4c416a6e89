package nets

import (
	"strings"
	"testing"
)

// A misspelled value of an enumerated backend option names the one meant,
// as a misspelled key does (issue 39, also-fix list).
func TestBackendOptionValueSuggests(t *testing.T) {
	_, err := ParseBackendSpec("cpu:conv=winogard")
	if err == nil || !strings.Contains(err.Error(), `(did you mean "winograd"?)`) {
		t.Errorf("cpu:conv=winogard: %v, want a suggestion of winograd", err)
	}
	_, err = ParseBackendSpec("cpu:threads=x")
	if err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("cpu:threads=x: %v, want an error without a suggestion (an integer option)", err)
	}
}
