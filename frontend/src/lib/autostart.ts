import type { Autostart } from './types';

/** The line under Settings → General's "Start Rerun when you log in" switch. */
export function autostartHint(a: Autostart): string {
  if (!a.available) return 'Not available here: start at login needs the desktop app on Linux for now.';
  if (a.enabled) return `Rerun starts in the tray when you log in, without a window (${a.path}).`;
  return 'Off: your coworkers work only while you have started Rerun.';
}
