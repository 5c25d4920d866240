import { mount } from 'svelte';
import App from './App.svelte';
import DesktopWindow from './components/DesktopWindow.svelte';
import './app.css';
import { parseDesktopHash } from './lib/popout';
import { mark } from './lib/painted';
import { startTheme } from './lib/theme';

mark('script_ms'); // the bundle has loaded and runs

startTheme();

const target = document.getElementById('app');
if (!target) throw new Error('index.html has no #app element');
target.replaceChildren(); // index.html's shell: the app paints its own now

// #desktop=<workspace>/<agent>: a popped-out Desktop, that agent's screen alone.
const desktop = parseDesktopHash(location.hash);

export default desktop ? mount(DesktopWindow, { target, props: { target: desktop } }) : mount(App, { target });
