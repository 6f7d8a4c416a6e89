package search

import (
	"testing"

	"github.com/canopy-go/canopy/internal/refdata"
)

// dataDir returns <repo>/../shared/data (see internal/refdata).
func dataDir(t testing.TB) string { t.Helper(); return refdata.Dir(t) }
