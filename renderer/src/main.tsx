import './styles/base.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { prefetchSettings } from './api/settings';
import { prefetchSnapshot } from './api/snapshot';
import { readStored } from './lib/hooks';

// The first screen's data, requested in parallel before the first render.
prefetchSettings();
if (/^#?\/?(today)?(\?|$)/.test(location.hash)) prefetchSnapshot();

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
