// One agent's installed apps (the Apps tab) and the catalog entries they came
// from, kept fresh by the event stream (connector.*, and variables.changed,
// which settles what an app is missing).
import { api } from './api';
import { coalesce } from './coalesce';
import { reportError } from './toasts.svelte';
import type { App, Connector, CustomServerInput, InstalledApp } from './apps';
import type { ChangeEvent } from './events';

export class AppsState {
  apps = $state<Connector[]>([]);
  /** Catalog entries by id (category, description, variables' help). */
  catalog = $state<Record<string, App>>({});
  /** Apps with an action on its way (their buttons wait). */
  busy = $state<Record<string, boolean>>({});
  loaded = $state(false);
  error = $state('');

  readonly wsId: string;
  readonly agentId: string;
  private catalogLoaded = false;

  constructor(wsId: string, agentId: string) {
    this.wsId = wsId;
    this.agentId = agentId;
  }

  /** Refetches the installed apps (and the catalog once); a failure is kept in `error`. */
  load = coalesce(async () => {
    try {
      this.apps = await api.listApps(this.wsId, this.agentId);
      this.error = '';
    } catch (err) {
      this.error = err instanceof Error ? err.message : String(err);
    } finally {
      this.loaded = true;
    }
    if (!this.catalogLoaded) {
      try {
        const cat = await api.searchApps(this.wsId, '', 1000);
        this.catalog = Object.fromEntries(cat.apps.map((a) => [a.id, a]));
        this.catalogLoaded = true;
      } catch {
        // The cards read without categories; the next load tries again.
      }
    }
  });

  onEvent(ev: ChangeEvent) {
    if (ev.workspace !== this.wsId) return;
    if (ev.kind === 'variables.changed') void this.load();
    else if (ev.kind.startsWith('connector.') && (!ev.agent || ev.agent === this.agentId)) void this.load();
  }

  /** Runs an action on one app; a failure becomes a toast saying `what`. Returns whether it worked. */
  async act(id: string, what: string, fn: () => Promise<unknown>): Promise<boolean> {
    this.busy[id] = true;
    try {
      await fn();
      return true;
    } catch (err) {
      reportError(err, what);
      return false;
    } finally {
      delete this.busy[id];
    }
  }

  private put(c: Connector) {
    this.apps = this.apps.some((x) => x.id === c.id) ? this.apps.map((x) => (x.id === c.id ? c : x)) : [...this.apps, c];
  }

  async install(catalogId: string): Promise<InstalledApp> {
    const made = await api.installApp(this.wsId, this.agentId, catalogId);
    this.put(made.connector);
    return made;
  }

  /** Registers a custom server; the answer may be the connector or {connector, form}. */
  async addCustom(input: CustomServerInput): Promise<Connector> {
    const made = await api.addCustomServer(this.wsId, this.agentId, input);
    const c = 'connector' in made ? made.connector : made;
    this.put(c);
    return c;
  }

  async signIn(c: Connector, values: Record<string, string>): Promise<Connector> {
    const saved = await api.signInApp(this.wsId, c.id, values);
    this.put(saved);
    return saved;
  }

  /** Reconnects and lists the tools; a failure is recorded in the app's status too. */
  async test(c: Connector): Promise<Connector> {
    try {
      const tested = await api.testApp(this.wsId, c.id);
      this.put(tested);
      return tested;
    } catch (err) {
      // The server records the failure in the app: show that, not only the toast.
      void this.load();
      throw err;
    }
  }

  async approve(c: Connector): Promise<Connector> {
    const approved = await api.approveApp(this.wsId, c.id);
    this.put(approved);
    return approved;
  }

  /** The browser sign-in's URL. */
  async oauthUrl(c: Connector): Promise<string> {
    return (await api.startAppOAuth(this.wsId, c.id)).url;
  }

  async uninstall(c: Connector) {
    await api.uninstallApp(this.wsId, c.id);
    this.apps = this.apps.filter((x) => x.id !== c.id);
  }
}
