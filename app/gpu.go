package app

import "path/filepath"

// hasGPU says whether this computer has a graphics device the webview can
// draw with: a DRM render node, or NVIDIA's own device files. Without one,
// OpenGL is Mesa's software renderer, where WebKit's accelerated
// compositing costs seconds before the first frame (llvmpipe compiles its
// shaders: under Xvfb the board painted 2.1 s later with it than without)
// and buys nothing, so the window draws without it.
func hasGPU(dev string) bool {
	for _, pattern := range []string{"dri/renderD*", "nvidia[0-9]*"} {
		if m, _ := filepath.Glob(filepath.Join(dev, pattern)); len(m) > 0 {
			return true
		}
	}
	return false
}
