package search

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDocumentedSizes keeps the record sizes the comments quote equal to
// the structs (issue 39, item 8: byte counts in comments went stale when
// the edge record shrank from 56 to 48 bytes with its extension). Each
// sentence is looked up in its file with the comment markers and line
// breaks folded away; a sentence that is reworded must be updated here.
func TestDocumentedSizes(t *testing.T) {
	withExt := EdgeBytes + EdgeExtBytes
	for _, c := range []struct {
		file, sentence string
		want           []any
	}{
		{"doc.go", "A node is %d bytes", []any{NodeBytes}},
		{"doc.go", "An edge is %d bytes in two parallel arrays", []any{EdgeBytes}},
		{"doc.go", "get another parallel array of %d bytes", []any{EdgeExtBytes}},
		{"doc.go", "the edge stays %d bytes with its extension", []any{withExt}},
		{"tree.go", "node is one state of the tree (%d bytes)", []any{NodeBytes}},
		{"tree.go", "(%d bytes, allocated only for trees that use them", []any{EdgeExtBytes}},
		{"tree.go", "%d bytes per edge for UCT and PUCT trees with one walker, %d with several, %d or %d for the others", []any{EdgeBytes, EdgeBytes + 4, withExt, withExt + 4}},
		{"simsel.go", "Nothing is added to the %d bytes per edge (edge, edgeStats and edgeExt)", []any{withExt}},
	} {
		src, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		text := foldComments(string(src))
		want := fmt.Sprintf(c.sentence, c.want...)
		if strings.Contains(text, want) {
			continue
		}
		// Say what the comment says instead, when the sentence is there
		// with other numbers.
		pat := regexp.QuoteMeta(c.sentence)
		pat = strings.ReplaceAll(pat, "%d", `\d+`)
		if got := regexp.MustCompile(pat).FindString(text); got != "" {
			t.Errorf("%s says %q; the structs give %q", c.file, got, want)
		} else {
			t.Errorf("%s no longer says %q: update this test with the comment", c.file, want)
		}
	}
}

// foldComments returns src with the // markers and the line breaks and
// indentation of comments folded into single spaces.
func foldComments(src string) string {
	src = regexp.MustCompile(`\n\s*//\s?`).ReplaceAllString(src, " ")
	return regexp.MustCompile(`[ \t]+`).ReplaceAllString(src, " ")
}
