// Package layers holds no code, only tests: one keeps Canopy's package
// layers pointing one way (see ARCHITECTURE.md): a package may import
// packages of its own layer or below, never above; another keeps
// docs/EXTENDING.md true, failing when a path or a package-qualified name
// it quotes no longer exists or a CANOPY_* variable the sources name is
// missing from its list.
package layers
