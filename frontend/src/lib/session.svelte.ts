// Whether this page is signed in to Rerun. The token comes with the link Rerun
// prints at start; any API call answering 401 means this page has none (or an
// old one), and nothing will work until it is opened from the current link.
import { onUnauthorized } from './api';

export class Session {
  signedOut = $state(false);
  private onSignOut = new Set<() => void>();

  /** Marks the page signed out and runs what waits for it, once. */
  signOut() {
    if (this.signedOut) return;
    this.signedOut = true;
    for (const fn of this.onSignOut) fn();
    this.onSignOut.clear();
  }

  /** Runs fn when the page is signed out (at once when it already is). Returns the unsubscribe. */
  whenSignedOut(fn: () => void): () => void {
    if (this.signedOut) {
      fn();
      return () => {};
    }
    this.onSignOut.add(fn);
    return () => this.onSignOut.delete(fn);
  }
}

export const session = new Session();
onUnauthorized(() => session.signOut());
