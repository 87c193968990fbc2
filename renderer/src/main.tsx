import './styles/base.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { prefetch } from './api/client';
import { readStored } from './lib/hooks';
import { SNAPSHOT_QUERY } from './screens/Today';

// The first screen's data, requested in parallel before the first render.
prefetch('/v1/settings');
if (/^#?\/?(today)?(\?|$)/.test(location.hash)) prefetch('/v1/snapshot', SNAPSHOT_QUERY);

// Apply a chosen theme before the first paint (no inline script: the CSP forbids them).
const theme = readStored<string>('chyme.theme', 'system');
if (theme === 'light' || theme === 'dark') document.documentElement.dataset.theme = theme;
if (window.chyme) document.documentElement.dataset.platform = window.chyme.platform;

performance.mark('chyme:boot');
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
