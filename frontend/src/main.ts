import { mount } from 'svelte';
import App from './App.svelte';
import DesktopWindow from './components/DesktopWindow.svelte';
import './app.css';
import { parseDesktopHash } from './lib/popout';
import { mark } from './lib/painted';
import { startTheme } from './lib/theme';
import { workspace as ws } from './lib/workspace.svelte';

mark('script_ms'); // the bundle has loaded and runs

startTheme();

const target = document.getElementById('app');
if (!target) throw new Error('index.html has no #app element');

// #desktop=<workspace>/<agent>: a popped-out Desktop, that agent's screen alone.
const desktop = parseDesktopHash(location.hash);

if (!desktop) {
  // The board's data first (index.html asked for it while this script
  // loaded): the app's first frame then draws the board, and the page is
  // not laid out and painted once empty on the way. Until it is in,
  // index.html's shell shows; a failure is the app's to show.
  await ws.start().catch(() => {});
}
target.replaceChildren(); // index.html's shell: the app paints its own now

export default desktop ? mount(DesktopWindow, { target, props: { target: desktop } }) : mount(App, { target });
