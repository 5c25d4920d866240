// Settings → General: this computer's choices about the app (start at login,
// what closing the window does, the MCP registry, update checks) and how
// they read.
/** Start at login (Settings → General): the entry written for this computer. */
export type Autostart = { enabled: boolean; available: boolean; path: string };

/** What closing the window does: hide it (the coworkers keep working) or quit. */
export type WhenClosed = 'background' | 'quit';

/** This computer's choices about the app; `window` says they apply (the desktop window, not `rerun serve`). */
export type Preferences = {
  when_closed: WhenClosed;
  window: boolean;
  /** The MCP registry the Apps catalog searches: '' the one Rerun started with, 'off' none, or a registry's https base URL. */
  mcp_registry: string;
  /** The registry searched now ('' when off). */
  mcp_registry_url: string;
  update_checks: UpdateChecks;
};

/** When Rerun looks for a newer version: once a day, or only on "Check for updates". */
export type UpdateChecks = 'daily' | 'manual';

/** The line under Settings → General's "Start Rerun when you log in" switch. */
export function autostartHint(a: Autostart): string {
  if (!a.available) return 'Not available here: start at login needs the desktop app.';
  if (a.enabled) return `Rerun starts in the tray when you log in, without a window (${a.path}).`;
  return 'Off: your coworkers work only while you have started Rerun.';
}

/** The choices of Settings → General's "When the window closes". */
export const WHEN_CLOSED_CHOICES: { id: WhenClosed; label: string; hint: string }[] = [
  {
    id: 'background',
    label: 'Keep working in the background',
    hint: 'The window hides; your coworkers keep working and the tray icon opens Rerun again.',
  },
  {
    id: 'quit',
    label: 'Quit Rerun',
    hint: 'Rerun quits, asking first when coworkers are working. Nothing runs until you start it again.',
  },
];

/** The choices of Settings → General's "Updates". */
export const UPDATE_CHECKS_CHOICES: { id: UpdateChecks; label: string; hint: string }[] = [
  { id: 'daily', label: 'Check daily', hint: 'Rerun looks for a new version once a day and says so in the top bar. It never installs anything by itself.' },
  { id: 'manual', label: 'Only when I ask', hint: 'Rerun looks only when you click Check for updates in About Rerun.' },
];
