// Package layers holds no code, only a test that keeps Canopy's package
// layers pointing one way (see ARCHITECTURE.md): a package may import
// packages of its own layer or below, never above.
package layers
