import './styles/base.css';
import { StrictMode } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { App, type AppVariant } from './App';
import { prefetchSettings } from './api/settings';
import { prefetchSnapshot } from './api/snapshot';
import { readStored } from './lib/hooks';

/** Starts the app: the desktop's page (main.tsx) and the phone's (phone/main.tsx), once its transport is set. */
export function startApp(variant?: AppVariant): Root {
  // The first screen's data, requested in parallel before the first render.
  prefetchSettings();
  if (/^#?\/?(today)?(\?|$)/.test(location.hash)) prefetchSnapshot();

  // Apply a chosen theme before the first paint (no inline script: the CSP forbids them).
  const theme = readStored<string>('chyme.theme', 'system');
  if (theme === 'light' || theme === 'dark') document.documentElement.dataset.theme = theme;
  if (window.chyme) document.documentElement.dataset.platform = window.chyme.platform;

  performance.mark('chyme:boot');
  const root = createRoot(document.getElementById('root')!);
  root.render(
    <StrictMode>
      <App {...(variant ? { variant } : {})} />
    </StrictMode>,
  );
  // The phone's page unmounts it when the phone is forgotten (phone/erased.ts).
  return root;
}
