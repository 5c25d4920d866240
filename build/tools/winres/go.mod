// A module of its own for the Windows resource tool (icon, version info,
// manifest of rerun.exe), so that its dependencies never move the app's:
// `make dist-windows` runs it with `go tool`.
module github.com/rerun-build/rerun-desktop/build/tools/winres

go 1.26.8

tool github.com/tc-hib/go-winres

require (
	github.com/cpuguy83/go-md2man/v2 v2.0.2 // indirect
	github.com/nfnt/resize v0.0.0-20180221191011-83c6a9932646 // indirect
	github.com/russross/blackfriday/v2 v2.1.0 // indirect
	github.com/tc-hib/go-winres v0.3.3 // indirect
	github.com/tc-hib/winres v0.2.1 // indirect
	github.com/urfave/cli/v2 v2.25.7 // indirect
	github.com/xrash/smetrics v0.0.0-20201216005158-039620a65673 // indirect
	golang.org/x/image v0.12.0 // indirect
)
