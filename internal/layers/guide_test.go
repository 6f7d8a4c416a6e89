package layers

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// guidePackages maps the package names docs/EXTENDING.md qualifies
// identifiers with to their directories.
var guidePackages = map[string]string{
	"agent":    "agent",
	"engine":   "search/engine",
	"games":    "games",
	"gametest": "games/gametest",
	"nets":     "nets",
	"nettest":  "nets/nettest",
	"perft":    "games/perft",
	"search":   "search",
	"spec":     "spec",
}

// TestExtendingGuideNamesExist keeps docs/EXTENDING.md true as the code
// moves (issue 39, item 8: docs that go stale): every repository path it
// quotes in backquotes must exist, and every identifier it qualifies with
// one of guidePackages (`games.Registration`, `nets.RegisterBackendInfo`)
// must be declared in that package. Paths holding the placeholder NAME
// are the reader's own and are skipped.
func TestExtendingGuideNamesExist(t *testing.T) {
	const root = "../.."
	doc, err := os.ReadFile(filepath.Join(root, "docs", "EXTENDING.md"))
	if err != nil {
		t.Fatal(err)
	}
	sources := map[string]string{} // package dir -> its non-test Go source
	source := func(dir string) string {
		if s, ok := sources[dir]; ok {
			return s
		}
		files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in %s", dir)
		}
		var b strings.Builder
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(src)
		}
		sources[dir] = b.String()
		return sources[dir]
	}
	path := regexp.MustCompile("^[a-z][a-z0-9_]*(/[A-Za-z0-9_.-]+)+/?$")
	ident := regexp.MustCompile(`^\*?([a-z]+)\.([A-Z][A-Za-z0-9]*)`)
	checked := 0
	for _, m := range regexp.MustCompile("`([^`\n]+)`").FindAllStringSubmatch(string(doc), -1) {
		tok := m[1]
		switch {
		case path.MatchString(tok) && !strings.Contains(tok, "NAME"):
			checked++
			if _, err := os.Stat(filepath.Join(root, tok)); err != nil {
				t.Errorf("docs/EXTENDING.md quotes %s, which does not exist", tok)
			}
		case ident.MatchString(tok):
			sm := ident.FindStringSubmatch(tok)
			dir, ok := guidePackages[sm[1]]
			if !ok {
				continue
			}
			checked++
			decl := regexp.MustCompile(`(?m)^(func|type|var|const)\s+(\([^)]*\)\s*)?` + sm[2] + `\b|^\s+` + sm[2] + `\s+[^\s(]|^\s+` + sm[2] + `\s*=`)
			if !decl.MatchString(source(dir)) {
				t.Errorf("docs/EXTENDING.md quotes %s, but package %s declares no %s", tok, dir, sm[2])
			}
		}
	}
	t.Logf("%d paths and names checked", checked)
	if checked < 50 {
		t.Errorf("only %d paths and names checked in docs/EXTENDING.md: has the quoting changed?", checked)
	}
}

// TestEnvironmentVariablesListed keeps the "Environment variables" section
// of docs/EXTENDING.md complete (issue 39, item 1: variables listed in one
// place): every CANOPY_* name written as a string literal in the Go
// sources must appear there.
func TestEnvironmentVariablesListed(t *testing.T) {
	const root = "../.."
	doc, err := os.ReadFile(filepath.Join(root, "docs", "EXTENDING.md"))
	if err != nil {
		t.Fatal(err)
	}
	lit := regexp.MustCompile(`"(CANOPY_[A-Z0-9_]+)`)
	found := map[string]string{} // variable -> a file that names it
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "runs" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range lit.FindAllStringSubmatch(string(src), -1) {
			found[m[1]] = p
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) < 10 {
		t.Fatalf("only %d CANOPY_* variables found in the sources: is the walk wrong?", len(found))
	}
	for v, file := range found {
		if !strings.Contains(string(doc), "`"+v+"`") {
			t.Errorf("%s names %s, which the Environment variables section of docs/EXTENDING.md does not list", file, v)
		}
	}
}
