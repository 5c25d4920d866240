import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { defineConfig, type Plugin } from 'vitest/config';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// dist/.gitkeep is committed so `go build` (//go:embed all:dist) works on a
// fresh clone; emptyOutDir deletes it, so put it back after every build.
const keepGitkeep: Plugin = {
  name: 'keep-gitkeep',
  apply: 'build',
  closeBundle() {
    writeFileSync(resolve(import.meta.dirname, 'dist/.gitkeep'), '');
  },
};

// base './' keeps asset URLs relative, so the same dist works under the Wails
// AssetServer and under http://127.0.0.1:PORT/ from `rerun serve`.
export default defineConfig({
  base: './',
  plugins: [svelte(), keepGitkeep],
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022' },
  test: { include: ['src/**/*.test.ts'], environment: 'node' },
});
