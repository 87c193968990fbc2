import { ScreenHead } from '../components/ui';

/** The phone's Integrations screen: only Sync, which is not built on the phone yet (issue 29). */
export function SyncPlaceholder() {
  return (
    <div className="screen" data-testid="integrations">
      <ScreenHead title="Integrations" subtitle="This phone keeps its own history." />
      <section className="card" id="sync" aria-labelledby="sync-title" data-testid="sync-card">
        <header className="card__head">
          <h2 id="sync-title">Sync</h2>
        </header>
        <p>Syncing this phone with your computers is not available yet. Everything you log here stays on this phone.</p>
      </section>
    </div>
  );
}
