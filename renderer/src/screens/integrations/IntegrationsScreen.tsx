import { useState, type MouseEvent } from 'react';
import { ScreenHead } from '../../components/ui';
import { ApiKeysCard } from './ApiKeysCard';
import { AssistantsCard } from './AssistantsCard';
import { BackupsCard } from './BackupsCard';
import { DataCard } from './DataCard';
import { MqttCard } from './MqttCard';
import { SettingsCard } from './SettingsCard';
import { SyncCard } from './SyncCard';
import { WebhooksCard } from './WebhooksCard';
import './Integrations.css';

export default function IntegrationsScreen() {
  // A key made for an assistant shows in the API keys list too.
  const [keysVersion, setKeysVersion] = useState(0);
  return (
    <div className="screen" data-testid="integrations">
      <ScreenHead title="Integrations" subtitle="Connect scripts, dashboards and home automation to your own data." />
      <nav className="subnav" aria-label="Sections">
        <a href="#/integrations" onClick={(e) => jump(e, 'keys')}>API keys</a>
        <a href="#/integrations" onClick={(e) => jump(e, 'assistants')}>AI assistants</a>
        <a href="#/integrations" onClick={(e) => jump(e, 'webhooks')}>Webhooks</a>
        <a href="#/integrations" onClick={(e) => jump(e, 'mqtt')}>Home Assistant</a>
        <a href="#/integrations" onClick={(e) => jump(e, 'settings')}>Settings</a>
        <a href="#/integrations" onClick={(e) => jump(e, 'sync')}>Sync</a>
        <a href="#/integrations" onClick={(e) => jump(e, 'data')}>Export &amp; import</a>
        <a href="#/integrations" onClick={(e) => jump(e, 'backups')}>Backups</a>
      </nav>
      <ApiKeysCard version={keysVersion} />
      <AssistantsCard onKeyCreated={() => setKeysVersion((v) => v + 1)} />
      <WebhooksCard />
      <MqttCard />
      <SettingsCard />
      {/* With the other cards about where the data lives: sync, export and import, backups. */}
      <SyncCard />
      <DataCard />
      <BackupsCard />
    </div>
  );
}

function jump(e: MouseEvent, id: string) {
  e.preventDefault();
  const el = document.getElementById(id);
  el?.scrollIntoView({ behavior: 'smooth', block: 'start' });
  el?.querySelector<HTMLElement>('h2')?.focus();
}
