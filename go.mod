module github.com/canopy-go/canopy

go 1.26

require (
	github.com/ebitengine/purego v0.11.3
	github.com/google/pprof v0.0.0-20260906184651-6331bc6350fe
	github.com/klauspost/cpuid/v2 v2.4.2
)

require golang.org/x/sys v0.41.0 // indirect
