package spec

import "fmt"

// Suggest returns ` (did you mean "X"?)` when one of known is close to
// name (a misspelling: a few edits away, relative to its length, or
// differing only in case), else "". Error messages append it after the
// name they reject.
func Suggest(name string, known []string) string {
	if best, ok := Closest(name, known); ok {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

// Closest returns the known word nearest to name by edit distance, when
// it is near enough to be a misspelling of it: at most 1 edit for names
// of up to 4 letters, 2 up to 8, 3 beyond (ignoring case). Ties go to the
// first in known; an exact match is no misspelling (ok false).
func Closest(name string, known []string) (string, bool) {
	if name == "" {
		return "", false
	}
	limit := 3
	switch n := len([]rune(name)); {
	case n <= 4:
		limit = 1
	case n <= 8:
		limit = 2
	}
	best, bestD := "", limit+1
	for _, k := range known {
		if k == name {
			return "", false // not a misspelling
		}
		if d := editDistance(lower(name), lower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best, bestD <= limit
}

func lower(s string) []rune {
	r := []rune(s)
	for i, c := range r {
		if c >= 'A' && c <= 'Z' {
			r[i] = c + 'a' - 'A'
		}
	}
	return r
}

// editDistance is the optimal-string-alignment distance: insertions,
// deletions, substitutions and transpositions of neighbours cost 1.
func editDistance(a, b []rune) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
