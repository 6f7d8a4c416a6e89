module github.com/canopy-go/canopy

go 1.26
